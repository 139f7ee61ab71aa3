"""Labelled sets for the chat's context, generated: Spanish with some English.

Each *case* is one subject (a relative, a pet, a server, a client, a subscription...) and holds:

- the **answer**: one thing the person stated about it (a fact, a decision, a promise, a
  preference);
- two **near-topic** memories about the same subject that do not answer (related: handing them
  is not handing something unrelated);
- two **questions** whose answer is that memory, written differently;
- sometimes an earlier **question** the person asked about it in the chat, logged as a turn:
  it is not what ALMA knows and must never take the answer's place.

The cases of one family share their templates, so the other subjects' memories are the hardest
distractors: another relative's birthday, another server's backup hour. They count as
*unrelated*, and so does everything else (ordinary days, written from other templates). Some
questions have no answer stored at all: whatever the context hands them is unrelated.

Memories that differ in a name only ("Llamé a Sergio para charlar" / "...a Diego...") are
taken as repeats by reinforcement (agent/memory/reinforce.py) and stored once, so fewer are
stored than generated; the answers are written so that none is another's repeat.

Cases alternate between the ``fit`` split (what parameters are fitted on) and the ``report``
split (what the figures are measured on); the no-answer questions alternate too. Deterministic
for a seed: ``python -m tests.support.grounded_eval ROOT`` builds the store from it.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta

from tests.support.memory_eval_data import EvalMemory, EvalQuery

SEED = 21
MONTHS = [
    "enero",
    "febrero",
    "marzo",
    "abril",
    "mayo",
    "junio",
    "julio",
    "agosto",
    "septiembre",
    "octubre",
    "noviembre",
    "diciembre",
]
EN_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
WEEKDAYS = ["lunes", "martes", "miércoles", "jueves", "viernes", "sábado"]
CITIES = [
    "Valencia",
    "Sevilla",
    "Bilbao",
    "Zaragoza",
    "Granada",
    "Oviedo",
    "Málaga",
    "Salamanca",
    "Cádiz",
    "Vigo",
    "Murcia",
    "Pamplona",
    "Toledo",
    "Burgos",
    "León",
    "Girona",
    "Lisboa",
    "Oporto",
    "Lyon",
    "Berlín",
]


#: A small store for the tests that chat or search by hand: one fact, the question a person
#: asks about it, and ordinary memories about other things.
FACT = "Soy alérgico a los frutos secos."
ASKED = "¿soy alérgico a algo?"
OTHERS = (
    "Mi hermana Lucía cumple años el 3 de mayo.",
    "El backup de la nube se hace a las 3:15 en /mnt/respaldo.",
    "Compré un candado en U para la bici nueva.",
    "Cené con Marta en el japonés del centro.",
    "Tengo cita con el dentista el martes a las 10:30.",
    "La ITV del coche caduca en marzo.",
    "Los lunes tengo reunión de equipo a las 9.",
)


@dataclass
class Case:
    key: str
    answer: str
    near: tuple[str, ...]
    questions: tuple[str, ...]
    asked_before: str = ""  # a question the person already asked in the chat, or ""


@dataclass
class GroundedSet:
    memories: list[EvalMemory] = field(default_factory=list)
    queries: list[EvalQuery] = field(default_factory=list)

    def split(self, name: str) -> list[EvalQuery]:
        return [q for q in self.queries if q.split == name]


Family = Callable[[random.Random, int], Case]


def _day(r: random.Random) -> str:
    return f"{r.randint(1, 28)} de {r.choice(MONTHS)}"


def _hour(r: random.Random) -> str:
    return f"{r.randint(6, 22)}:{r.choice(['00', '15', '30', '45'])}"


# Subjects per family: each subject is one case (unique within its family).
RELATIVES = [
    ("hermana", "Lucía"), ("hermano", "Andrés"), ("madre", "Carmen"), ("padre", "Julián"),
    ("tía", "Remedios"), ("tío", "Paco"), ("prima", "Nerea"), ("primo", "Iván"),
    ("abuela", "Pilar"), ("abuelo", "Eusebio"), ("sobrina", "Alba"), ("cuñado", "Rubén"),
    ("suegra", "Maite"), ("ahijado", "Hugo"),
]  # fmt: skip
FRIENDS = [
    "Marta",
    "Sergio",
    "Elena",
    "Javier",
    "Noelia",
    "Óscar",
    "Begoña",
    "Raúl",
    "Inés",
    "Diego",
    "Sonia",
    "Álvaro",
    "Lorena",
    "Gonzalo",
]
COLLEAGUES = [
    "Patricia",
    "Tomás",
    "Rocío",
    "Fermín",
    "Aitana",
    "Borja",
    "Clara",
    "Joaquín",
    "Vera",
    "Emilio",
    "Olga",
]
TEAMS = [
    "facturación", "soporte", "la app móvil", "compras", "datos", "seguridad", "la web",
    "infraestructura", "marketing", "recursos humanos", "calidad",
]  # fmt: skip
PETS = [
    ("perra", "Luna"), ("gato", "Simba"), ("perro", "Toby"), ("gata", "Nala"),
    ("conejo", "Copo"), ("perro", "Rocky"), ("gata", "Mía"), ("loro", "Pico"),
    ("perra", "Kira"), ("gato", "Garfield"),
]  # fmt: skip
HOSTS = [
    "nube.casa.lan",
    "nas-salon",
    "pi-huerto",
    "vps-ovh",
    "portatil-viejo",
    "torre-estudio",
    "media-box",
]
CLIENTS = [
    "Ferretería Ortiz",
    "Clínica Dental Sonrisa",
    "Bodegas Arana",
    "Talleres Mecánicos Ruiz",
    "Editorial Faro",
    "Panadería La Espiga",
    "Gestoría Molina",
    "Academia Kappa",
    "Hostal Brisa",
    "Floristería Jazmín",
]
DOCTORS = [
    "dentista", "oftalmóloga", "fisioterapeuta", "dermatólogo", "cardióloga", "traumatólogo",
    "otorrino", "psicóloga", "podólogo", "endocrino", "alergólogo",
]  # fmt: skip
MEDS = [
    ("ibuprofeno", "el dolor de rodilla"), ("omeprazol", "el estómago"),
    ("eutirox", "el tiroides"), ("loratadina", "la alergia al polen"),
    ("enalapril", "la tensión"), ("melatonina", "dormir"), ("vitamina D", "el déficit"),
    ("hierro", "la anemia"), ("magnesio", "los calambres"),
]  # fmt: skip
SERVICES = [
    "Netflix", "Spotify", "el gimnasio", "iCloud", "la fibra de casa", "el seguro del hogar",
    "la tarifa del móvil", "Filmin", "el periódico digital", "Dropbox", "el seguro del coche",
    "la cuota de la asociación de vecinos",
]  # fmt: skip
KEY_PLACES = [
    "trastero", "buzón", "casa del pueblo", "oficina", "garaje", "apartamento de la playa",
    "candado de la bici", "armario del sótano", "local de ensayo", "huerto",
]  # fmt: skip
SPOTS = [
    "el cajón de la entrada", "la caja de galletas de la cocina", "el bolsillo del abrigo gris",
    "la mochila azul", "el joyero de la abuela", "la guantera del coche", "el estante del baño",
    "detrás del reloj del salón", "una taza del aparador", "el cajón de los calcetines",
]  # fmt: skip
THINGS_LENT = [
    "el taladro", "la tienda de campaña", "los apuntes de inglés", "la Thermomix",
    "el libro de Murakami", "la escalera", "el disco duro externo", "la maleta grande",
    "la guitarra", "el carrito del bebé", "las raquetas de pádel",
]  # fmt: skip
HABITS = [
    ("el café", "tomar solo uno al día, por la mañana"),
    ("el móvil", "dejarlo fuera del dormitorio por la noche"),
    ("el azúcar", "no echarlo en el café"),
    ("las redes sociales", "mirarlas solo los domingos"),
    ("el alcohol", "no beber entre semana"),
    ("el coche", "ir en bici al trabajo si no llueve"),
    ("la tele", "apagarla a las once"),
    ("los ahorros", "apartar 200 euros cada mes al fondo de emergencia"),
    ("el gimnasio", "ir lunes, miércoles y viernes a primera hora"),
    ("la cena", "cenar antes de las nueve"),
]  # fmt: skip
TRIPS = [
    "Lisboa",
    "Roma",
    "Oporto",
    "Berlín",
    "Praga",
    "Asturias",
    "Menorca",
    "Ámsterdam",
    "Edimburgo",
    "Florencia",
]
HOTELS = [
    "Miramar",
    "Las Dunas",
    "Casa Verde",
    "Plaza",
    "El Faro",
    "Aurora",
    "San Marco",
    "Central",
    "Atlántico",
    "Alhambra",
]
EN_PEOPLE = ["Emma", "Oliver", "Grace", "Liam", "Chloe", "Noah", "Sophie", "Jack"]
EN_SERVICES = ["Netflix", "the VPN", "GitHub Copilot", "Audible", "the cloud backup", "Duolingo"]
EN_HOSTS = ["build-box", "homelab-01", "git.home.lan", "minecraft-server", "pihole"]


def birthday(r: random.Random, i: int) -> Case:
    rel, name = RELATIVES[i]
    city, hobby = r.choice(CITIES), r.choice(["la montaña", "el jazz", "cocinar", "el ajedrez"])
    return Case(
        f"cumple-{name}",
        f"El cumpleaños de mi {rel} {name} es el {_day(r)}.",
        (f"{name} vive en {city} desde hace {r.randint(2, 15)} años.",
         f"A mi {rel} {name} le encanta {hobby}."),
        (f"¿Cuándo es el cumpleaños de {name}?", f"¿qué día cumple años mi {rel}?"),
        f"¿Te acuerdas de cuándo cumple {name}?",
    )  # fmt: skip


def friend_moved(r: random.Random, i: int) -> Case:
    name = FRIENDS[i]
    city, year = r.choice(CITIES), r.randint(2015, 2026)
    return Case(
        f"amigo-{name}",
        f"Mi amiga {name} se mudó a {city} en {year} por trabajo.",
        (f"{name} y yo nos conocimos en la universidad.",
         f"A {name} le regalé un libro de fotografía por su boda."),
        (f"¿Dónde vive ahora {name}?", f"¿a qué ciudad se fue {name}?"),
    )  # fmt: skip


def colleague_role(r: random.Random, i: int) -> Case:
    name, team = COLLEAGUES[i], TEAMS[i]  # one lead a team: a question has one answer
    return Case(
        f"colega-{name}",
        f"{name} lleva el equipo de {team} y es quien aprueba los cambios de ese área.",
        (f"Con {name} comí el viernes en el bar de abajo.",
         f"{name} está de vacaciones la primera semana de {r.choice(MONTHS)}."),
        (f"¿Quién aprueba los cambios de {team}?", f"¿de qué equipo es responsable {name}?"),
    )  # fmt: skip


def pet_vaccine(r: random.Random, i: int) -> Case:
    animal, name = PETS[i]
    return Case(
        f"mascota-{name}",
        f"A mi {animal} {name} le toca la vacuna de la rabia el {_day(r)} en la clínica "
        f"{r.choice(['Patas', 'Vetsalud', 'San Antón', 'Huellas'])}.",
        (f"{name} come pienso sin cereales, {r.randint(80, 300)} gramos al día.",
         f"{name} tiene {r.randint(1, 14)} años y le dan miedo los petardos."),
        (f"¿Cuándo tiene que vacunarse {name}?", f"¿Qué día llevo a {name} al veterinario?"),
        f"¿{name} tenía alguna vacuna pendiente?",
    )  # fmt: skip


def server_backup(r: random.Random, i: int) -> Case:
    host = HOSTS[i]
    path = r.choice(["/mnt/respaldo", "/srv/copias", "/media/usb-backup", "/backup/diario"])
    return Case(
        f"host-{host}",
        f"La copia de seguridad de {host} se hace cada noche a las {_hour(r)} con restic en {path}.",
        (f"{host} tiene {r.choice([4, 8, 16, 32])} GB de RAM y un disco de {r.choice([1, 2, 4])} TB.",
         f"Reinicié {host} el {_day(r)} por una actualización del kernel."),
        (f"¿A qué hora hace el backup {host}?", f"¿dónde guarda {host} sus copias?"),
        f"¿Por qué falla el backup de {host}?",
    )  # fmt: skip


def client_invoice(r: random.Random, i: int) -> Case:
    client = CLIENTS[i]
    return Case(
        f"cliente-{client}",
        f"{client} me debe la factura de {r.randint(3, 40) * 50} euros de {r.choice(MONTHS)}; "
        "dijeron que pagarían este mes.",
        (f"Con {client} tengo reunión los {r.choice(WEEKDAYS)} para revisar el proyecto.",
         f"La web de {client} usa WordPress y el hosting lo pagan ellos."),
        (f"¿Cuánto me debe {client}?", f"¿Qué factura tiene pendiente {client}?"),
        f"¿Me ha pagado ya {client}?",
    )  # fmt: skip


def appointment(r: random.Random, i: int) -> Case:
    doc = DOCTORS[i]
    return Case(
        f"cita-{doc}",
        f"Tengo cita con el {doc} el {r.choice(WEEKDAYS)} {_day(r)} a las {_hour(r)}.",
        (f"El {doc} me dijo que volviera si no mejoraba en un mes.",
         f"La consulta del {doc} está en la calle {r.choice(['Mayor', 'Colón', 'Alcalá', 'Real'])}."),
        (f"¿Cuándo tengo cita con el {doc}?", f"¿qué día me toca ir al {doc}?"),
    )  # fmt: skip


def medication(r: random.Random, i: int) -> Case:
    med, why = MEDS[i]
    return Case(
        f"med-{med}",
        f"Tomo {med} de {r.choice([1, 5, 20, 50, 400, 600])} mg cada "
        f"{r.choice(['8 horas', '12 horas', 'mañana', 'noche'])} para {why}.",
        (f"El {med} lo compro en la farmacia de la esquina con receta electrónica.",
         f"Me recetaron el {med} en {r.choice(MONTHS)} y la revisión es en un año."),
        (f"¿Cada cuánto tomo el {med}?", f"¿Qué dosis de {med} me toca?"),
        f"¿Sigo tomando {med}?",
    )  # fmt: skip


def subscription(r: random.Random, i: int) -> Case:
    svc = SERVICES[i]
    return Case(
        f"sub-{svc}",
        f"Pago {r.randint(4, 60)} euros al mes por {svc} y se renueva el día {r.randint(1, 28)}.",
        (f"Quiero revisar si de verdad uso {svc} o lo cancelo.",
         f"La cuenta de {svc} está a nombre de {r.choice(FRIENDS)}."),
        (f"¿Cuánto me cuesta {svc}?", f"¿Qué día se cobra {svc}?"),
    )  # fmt: skip


def keys(r: random.Random, i: int) -> Case:
    place, spot = KEY_PLACES[i], SPOTS[i]
    return Case(
        f"llaves-{place}",
        f"Las llaves del {place} están en {spot}.",
        (f"En el {place} guardo las cajas de la mudanza y los adornos de Navidad.",
         f"Hay que cambiar la cerradura del {place}, se atasca."),
        (f"¿Dónde dejé las llaves del {place}?", f"¿dónde guardo la llave del {place}?"),
        f"¿Alguien ha visto las llaves del {place}?",
    )  # fmt: skip


def promise(r: random.Random, i: int) -> Case:
    thing, name = THINGS_LENT[i], FRIENDS[(i + 5) % len(FRIENDS)]
    return Case(
        f"promesa-{thing}",
        f"Le prometí a {name} que le devolvería {thing} antes del {_day(r)}. #pendiente",
        (f"{name} me prestó {thing} para la mudanza de {r.choice(CITIES)}.",
         f"Tengo {thing} en el maletero del coche todavía."),
        (f"¿Qué le prometí a {name}?", f"¿para cuándo tengo que devolver {thing}?"),
    )  # fmt: skip


def decision(r: random.Random, i: int) -> Case:
    topic, rule = HABITS[i]
    return Case(
        f"decision-{topic}",
        f"He decidido, con {topic}, {rule} a partir de {r.choice(MONTHS)}.",
        (f"Llevo semanas dándole vueltas a lo de {topic}.",
         f"Mi pareja dice que lo de {topic} me afecta al humor."),
        (f"¿Qué decidí sobre {topic}?", f"¿Cuál era mi norma con {topic}?"),
        f"¿Qué hago con {topic}?",
    )  # fmt: skip


def trip(r: random.Random, i: int) -> Case:
    city, hotel = TRIPS[i], HOTELS[i]
    d = r.randint(1, 20)
    month = r.choice(MONTHS)
    return Case(
        f"viaje-{city}",
        f"El viaje a {city} es del {d} al {d + r.randint(2, 7)} de {month}; dormimos en el hotel {hotel}.",
        (f"En {city} quiero ver el museo y comer en un sitio que me recomendó {r.choice(FRIENDS)}.",
         f"Los billetes a {city} costaron {r.randint(60, 400)} euros ida y vuelta."),
        (f"¿Cuándo nos vamos a {city}?", f"¿Cómo se llama el hotel de {city}?"),
    )  # fmt: skip


def preference(r: random.Random, i: int) -> Case:
    activity, pick = [
        ("leer", "el libro en papel al electrónico"), ("correr", "salir al amanecer que por la tarde"),
        ("trabajar", "el teclado mecánico al del portátil"), ("viajar", "el tren al avión"),
        ("desayunar", "tostada con tomate a la bollería"), ("dormir", "la almohada baja a la alta"),
        ("programar", "Python a JavaScript"), ("ver series", "la versión original con subtítulos"),
    ][i]  # fmt: skip
    return Case(
        f"pref-{activity}",
        f"Para {activity} prefiero {pick}.",
        (f"Este mes he sacado poco tiempo para {activity}.",
         f"{r.choice(FRIENDS)} me preguntó qué tal se me da {activity}."),
        (f"¿Qué prefiero para {activity}?", f"¿Cómo me gusta {activity}?"),
    )  # fmt: skip


def en_birthday(r: random.Random, i: int) -> Case:
    name = EN_PEOPLE[i]
    return Case(
        f"en-cumple-{name}",
        f"My niece {name}'s birthday is on {r.choice(EN_MONTHS)} {r.randint(1, 28)}.",
        (f"{name} is learning to play the violin.", f"{name} lives in {r.choice(CITIES)} with her dad."),
        (f"When is {name}'s birthday?", f"what day does {name} turn a year older?"),
        f"Do you remember {name}'s birthday?",
    )  # fmt: skip


def en_subscription(r: random.Random, i: int) -> Case:
    svc = EN_SERVICES[i]
    return Case(
        f"en-sub-{svc}",
        f"I pay {r.randint(3, 25)} dollars a month for {svc}, billed on the {r.randint(1, 28)}th.",
        (f"I should check whether I still use {svc}.", f"The {svc} account uses my work email."),
        (f"How much does {svc} cost me?", f"When is {svc} billed?"),
    )  # fmt: skip


def en_server(r: random.Random, i: int) -> Case:
    host = EN_HOSTS[i]
    return Case(
        f"en-host-{host}",
        f"The {host} server backs up to /{['mnt', 'srv', 'data', 'var', 'opt'][i]}/backup every "
        f"night at {i + 1}:{r.choice(['10', '20', '40', '50'])}.",
        (f"{host} runs Debian and has {r.choice([2, 4, 8])} cores.",
         f"I moved {host} to the shelf in the hallway."),
        (f"When does {host} run its backup?", f"Where does {host} keep its backups?"),
        f"Why is the {host} backup failing?",
    )  # fmt: skip


FAMILIES: tuple[tuple[Family, int], ...] = (
    (birthday, len(RELATIVES)),
    (friend_moved, len(FRIENDS)),
    (colleague_role, len(COLLEAGUES)),
    (pet_vaccine, len(PETS)),
    (server_backup, len(HOSTS)),
    (client_invoice, len(CLIENTS)),
    (appointment, len(DOCTORS)),
    (medication, len(MEDS)),
    (subscription, len(SERVICES)),
    (keys, len(KEY_PLACES)),
    (promise, len(THINGS_LENT)),
    (decision, len(HABITS)),
    (trip, len(TRIPS)),
    (preference, 8),
    (en_birthday, len(EN_PEOPLE)),
    (en_subscription, len(EN_SERVICES)),
    (en_server, len(EN_HOSTS)),
)

#: Ordinary days: what fills a chat log and answers none of the questions.
_FILLER: tuple[Callable[[random.Random], str], ...] = (
    lambda r: (
        f"Hoy he comido {r.choice(['lentejas', 'paella', 'ensalada', 'pollo asado', 'sopa', 'tortilla'])} con {r.choice(FRIENDS + COLLEAGUES)}."
    ),
    lambda r: (
        f"Esta mañana llovía en {r.choice(CITIES)} y llegué {r.randint(5, 40)} minutos tarde."
    ),
    lambda r: (
        f"He salido a correr {r.randint(3, 15)} km por el parque, {r.choice(['bien', 'cansado', 'con flato', 'muy a gusto'])}."
    ),
    lambda r: (
        f"Vi {r.choice(['una película', 'dos capítulos de una serie', 'un documental', 'el partido'])} y me acosté a las {r.randint(22, 24) % 24}:{r.choice(['00', '30'])}."
    ),
    lambda r: (
        f"Compré {r.choice(['pan', 'fruta', 'café', 'pilas', 'detergente', 'tomates'])} en el mercado, {r.randint(2, 30)} euros."
    ),
    lambda r: (
        f"Dormí {r.randint(4, 9)} horas y me levanté {r.choice(['descansado', 'con dolor de cabeza', 'de buen humor', 'sin ganas'])}."
    ),
    lambda r: (
        f"Reunión larga del proyecto {r.choice(['Atlas', 'Orión', 'Delta', 'Fénix', 'Nube'])}; seguimos el {r.choice(WEEKDAYS)}."
    ),
    lambda r: f"Leí {r.randint(10, 80)} páginas de la novela antes de dormir.",
    lambda r: (
        f"Fui en {r.choice(['bici', 'metro', 'autobús', 'coche'])} al centro a hacer recados."
    ),
    lambda r: (
        f"Llamé a {r.choice(FRIENDS)} para {r.choice(['charlar un rato', 'quedar el finde', 'felicitarle', 'pedirle una receta'])}."
    ),
    lambda r: (
        f"Arreglé {r.choice(['el grifo de la cocina', 'la persiana', 'la lámpara del pasillo', 'la cadena de la bici'])} yo solo."
    ),
    lambda r: (
        f"Hizo {r.randint(2, 38)} grados y pasé la tarde {r.choice(['en casa', 'en la terraza', 'en la biblioteca', 'paseando'])}."
    ),
    lambda r: (
        f"Today I cooked {r.choice(['curry', 'pasta', 'pancakes', 'a stew'])} and watched {r.choice(['a movie', 'the news', 'a documentary'])}."
    ),
    lambda r: f"Went for a {r.randint(2, 12)} km walk with {r.choice(EN_PEOPLE)} along the river.",
)

_PLACES = [
    "la biblioteca",
    "el parque",
    "la playa",
    "el mercado",
    "la sierra",
    "el cine",
    "el museo",
]
_MOODS = ["contento", "cansado", "algo triste", "con energía", "nervioso", "tranquilo", "agobiado"]
_FILLER += (
    lambda r: (
        f"El {r.choice(WEEKDAYS)} fui a {r.choice(_PLACES)} con {r.choice(FRIENDS)} y volví {r.choice(_MOODS)}."
    ),
    lambda r: (
        f"Terminé el informe del trimestre a las {_hour(r)}; {r.choice(COLLEAGUES)} lo revisará."
    ),
    lambda r: (
        f"Me he apuntado a clases de {r.choice(['yoga', 'cerámica', 'alemán', 'natación', 'fotografía', 'baile'])} los {r.choice(WEEKDAYS)} por la {r.choice(['mañana', 'tarde'])}."
    ),
    lambda r: f"El tren a {r.choice(CITIES)} salió con {r.randint(5, 90)} minutos de retraso.",
    lambda r: (
        f"Hoy {r.choice(COLLEAGUES)} trajo {r.choice(['bizcocho', 'churros', 'fruta', 'empanada'])} a la oficina por su {r.choice(['cumpleaños', 'santo', 'ascenso'])}."
    ),
    lambda r: (
        f"Planté {r.choice(['tomates', 'lechugas', 'albahaca', 'fresas', 'pimientos'])} en el balcón; necesitan riego cada {r.randint(2, 5)} días."
    ),
    lambda r: (
        f"I read {r.randint(2, 40)} pages of {r.choice(['a thriller', 'a biography', 'a sci-fi novel'])} on the {r.choice(['bus', 'train', 'sofa'])}."
    ),
)

#: Questions about things that were never stored.
NO_ANSWER = (
    "¿Cuál es la presión de las ruedas de la bici?",
    "¿Cuántos litros caben en el depósito de la caldera?",
    "¿Qué talla de zapatos usa mi vecino?",
    "¿Cómo se llama el profesor de piano de mi hija?",
    "¿En qué año se construyó el edificio de la oficina?",
    "¿Qué número de socio tengo en el club de montaña?",
    "¿Cuál es la matrícula de la moto?",
    "¿Qué marca de pintura usamos en el salón?",
    "What is the wifi password at the cabin?",
    "Which airline did I fly to Dublin with?",
    "¿Cuántas horas de vuelo hay hasta Tokio?",
    "¿Qué grupo sanguíneo tengo?",
    "¿Quién me arregló el tejado?",
    "¿Dónde compré el sofá?",
    "¿A qué hora abre la piscina municipal?",
    "¿Cuál es mi número de la seguridad social?",
)


def build(seed: int = SEED, filler: int = 1800) -> GroundedSet:
    r = random.Random(seed)
    out = GroundedSet()
    start = date(2026, 1, 5)
    n_case = 0

    def day() -> str:
        return (start + timedelta(days=r.randint(0, 300))).isoformat()

    def memory(key: str, content: str, n: int) -> EvalMemory:
        return EvalMemory(
            f"{key}#{n}", content, key, "", "add" if r.random() < 0.3 else "log", day()
        )

    for family, count in FAMILIES:
        for i in range(count):
            case = family(r, i)
            split = "fit" if n_case % 2 == 0 else "report"
            n_case += 1
            out.memories.append(memory(case.key, case.answer, 0))
            for n, text in enumerate(case.near, start=1):
                out.memories.append(memory(case.key, text, n))
            if case.asked_before:
                # Asked in a chat, never answered from what ALMA knew: a logged turn.
                asked = EvalMemory(f"{case.key}#q", case.asked_before, case.key, "", "log", day())
                out.memories.append(asked)
            for q in case.questions:
                out.queries.append(EvalQuery(q, f"{case.key}#0", case.key, split))
    seen: set[str] = {m.content for m in out.memories}
    n = 0
    for _attempt in range(filler * 20):
        if n >= filler:
            break
        text = r.choice(_FILLER)(r)
        if text in seen:
            continue
        seen.add(text)
        out.memories.append(EvalMemory(f"filler#{n}", text, f"filler#{n}", "", "log", day()))
        n += 1
    for i, q in enumerate(NO_ANSWER):
        out.queries.append(EvalQuery(q, "", f"none#{i}", "fit" if i % 2 == 0 else "report"))
    return out
