"""A synthetic, deterministic memory set for ranking evaluation (issue 12): one person's life.

Run ``python -m tests.support.memory_eval_data --out DIR`` to write it as JSONL; tests call
``build()`` directly. Everything comes from the hand-written cases and templates below and a
seeded ``random.Random``: the same set on every machine.

- **Cases**: a memory that answers a question (``target``), four or more near-topic
  look-alikes (same subject, other details: the trap a small model falls into), and two
  questions that paraphrase the target rather than copy it. Cases alternate between the
  ``tune`` and the ``heldout`` split, so the cut is calibrated on one half and reported on
  both.
- **Filler**: ordinary days (work, family, health, money, hobbies, home), generated from
  templates with varied names, places and numbers, about 80% Spanish and 20% English, so that
  the store holds 2,000+ memories of which few answer any given question.

Every memory carries the ``topic`` it is about (its case's key, or ``filler:...``): a context
item whose topic differs from the question's is *unrelated* to it.
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass, field
from pathlib import Path

SEED = 20261123


@dataclass(frozen=True)
class Case:
    key: str
    theme: str
    target: str
    lookalikes: tuple[str, ...]
    questions: tuple[str, ...]


@dataclass(frozen=True)
class EvalMemory:
    id: str
    content: str
    topic: str
    theme: str
    via: str  # "add" (alma-ctl memory add) or "log" (a chat turn, ingested)
    day: str


@dataclass(frozen=True)
class EvalQuery:
    query: str
    expected: str  # the EvalMemory id that answers it
    topic: str
    split: str  # "tune" | "heldout"


@dataclass
class EvalSet:
    memories: list[EvalMemory] = field(default_factory=list)
    queries: list[EvalQuery] = field(default_factory=list)


def _c(key: str, theme: str, target: str, looks: list[str], questions: list[str]) -> Case:
    return Case(key, theme, target, tuple(looks), tuple(questions))


CASES: tuple[Case, ...] = (
    _c(
        "backup_disk",
        "tecnologia",
        "El backup nocturno falla porque el disco USB de 2 TB no se monta solo después de reiniciar.",
        [
            "Compré un disco USB nuevo de 4 TB para guardar las fotos de la familia.",
            "El backup de las fotos del móvil a la nube terminó sin errores esta semana.",
            "Tengo que etiquetar los discos viejos del cajón antes de tirarlos.",
            "El disco del portátil está al 91% y hay que liberar espacio.",
        ],
        [
            "¿Por qué no funciona la copia de seguridad de cada noche?",
            "¿Qué le pasa a la copia automática que se hace de madrugada?",
        ],
    ),
    _c(
        "dentist",
        "salud",
        "El dentista me dijo que tengo que volver el 12 de marzo para terminar la endodoncia de la muela.",
        [
            "Llevé a Lucía al dentista por una caries pequeña; no hizo falta anestesia.",
            "El seguro dental cubre dos limpiezas al año, no las ortodoncias.",
            "Me compré un cepillo eléctrico porque me sangraban las encías.",
            "La clínica dental de la esquina cerró y ahora es una panadería.",
        ],
        [
            "¿Cuándo tengo la próxima cita para acabar el tratamiento del diente?",
            "¿Qué fecha me dieron para rematar lo de la muela?",
        ],
    ),
    _c(
        "mortgage",
        "dinero",
        "La hipoteca pasa a tipo variable en enero y la cuota subirá unos 140 euros al mes.",
        [
            "Pagamos la última cuota del coche en octubre; por fin sin préstamo.",
            "El banco me ofreció una tarjeta de crédito con 0% el primer año; la rechacé.",
            "El alquiler del trastero sube 5 euros desde febrero.",
            "Hablé con el gestor sobre la declaración de la renta conjunta.",
        ],
        [
            "¿Cuánto más voy a pagar por la casa a partir de enero?",
            "¿Qué cambia en el préstamo del piso el año que viene?",
        ],
    ),
    _c(
        "dog_max",
        "familia",
        "Mi perro Max murió hace dos semanas y todavía me cuesta hablar de eso.",
        [
            "Max, el perro de mi hermana, se escapó del jardín y lo encontramos en el parque.",
            "Estamos pensando en adoptar un gato de la protectora en primavera.",
            "Compré pienso para perros mayores en la tienda del barrio.",
            "El veterinario de la calle Mayor abre también los sábados.",
        ],
        [
            "¿Te acuerdas de lo que le pasó a mi mascota?",
            "¿Cómo estoy llevando la pérdida de mi compañero de cuatro patas?",
        ],
    ),
    _c(
        "knee",
        "salud",
        "La resonancia confirmó una rotura parcial del menisco de la rodilla derecha; nada de correr en seis semanas.",
        [
            "Me torcí el tobillo izquierdo bajando del autobús, pero ya no duele.",
            "La fisioterapeuta me mandó ejercicios de espalda para hacer cada mañana.",
            "Me apunté a una carrera de 10 km en mayo.",
            "Las zapatillas de correr nuevas me hacen una rozadura en el talón.",
        ],
        [
            "¿Qué salió en la prueba de la pierna y cuánto tiempo tengo que parar?",
            "¿Puedo volver a salir a trotar ya o qué dijo el médico de mi lesión?",
        ],
    ),
    _c(
        "trading_risk",
        "dinero",
        "Regla de trading que me impuse: nunca arriesgar más del 1% de la cuenta en una sola operación.",
        [
            "Hoy cerré la posición en BTC con un 3% de ganancia antes de dormir.",
            "El broker cobra 0,1% de comisión por operación en futuros.",
            "Leí un libro sobre psicología del inversor; interesante pero repetitivo.",
            "Perdí 200 euros en una operación de apalancamiento x10 en marzo.",
        ],
        [
            "¿Cuánto me permito perder como máximo en cada trade?",
            "¿Qué límite de riesgo por operación decidí respetar?",
        ],
    ),
    _c(
        "sister_wedding",
        "familia",
        "La boda de mi hermana Carmen es el 6 de junio en Sevilla y yo doy el discurso.",
        [
            "Fuimos a la boda de mi primo Andrés en Valencia; acabó a las cinco de la mañana.",
            "Carmen me pidió que le recomendara un fotógrafo para su cumpleaños.",
            "Mis padres celebran sus 40 años de casados en septiembre.",
            "Tengo que comprar un traje nuevo; el azul ya no me queda bien.",
        ],
        [
            "¿Cuándo y dónde se casa Carmen?",
            "¿Qué me toca hacer en el enlace de mi hermana?",
        ],
    ),
    _c(
        "car_itv",
        "hogar",
        "El coche tiene que pasar la ITV antes del 30 de abril; la luz de freno trasera está fundida.",
        [
            "Cambié el aceite del coche en el taller de Paco por 85 euros.",
            "El seguro del coche se renueva en agosto; comparar precios antes.",
            "La moto de mi padre no arranca desde el invierno.",
            "Aparcar cerca de la oficina cuesta 12 euros al día.",
        ],
        [
            "¿Qué plazo tengo para la inspección técnica del vehículo y qué hay que arreglar?",
            "¿Hay algo del coche que deba reparar antes de la revisión obligatoria?",
        ],
    ),
    _c(
        "project_deadline",
        "trabajo",
        "El cliente de Logística Norte quiere la demo del panel de rutas el viernes 14 a las 10.",
        [
            "La reunión semanal con el equipo de Logística Norte se movió a los martes.",
            "El panel de ventas de Textiles Ruiz ya está en producción desde septiembre.",
            "Tengo que pedir acceso a la base de datos de rutas al equipo de sistemas.",
            "Logística Norte pagó por fin la factura pendiente de julio.",
        ],
        [
            "¿Para cuándo me piden enseñar el dashboard de los repartos?",
            "¿Cuándo es la presentación para el cliente de transportes?",
        ],
    ),
    _c(
        "boss_feedback",
        "trabajo",
        "En la evaluación anual Marta dijo que debo delegar más y dejar de revisar todo el código yo solo.",
        [
            "Marta se va de vacaciones del 3 al 17 de agosto; la sustituye Jorge.",
            "Me subieron el sueldo un 4% en la revisión de enero.",
            "Jorge pidió feedback sobre su presentación del trimestre.",
            "Las evaluaciones de desempeño se hacen ahora por trimestre y no por año.",
        ],
        [
            "¿Qué me recomendó mi jefa que mejorara en la revisión del año?",
            "¿Cuál fue la crítica principal que recibí de mi responsable?",
        ],
    ),
    _c(
        "sleep_insomnia",
        "salud",
        "Desde que tomo café después de las cinco me despierto a las 3 y no vuelvo a dormirme.",
        [
            "Dormí nueve horas el sábado y me levanté con dolor de cabeza.",
            "Mi hija se despierta por las noches con pesadillas desde la mudanza.",
            "Compré un colchón nuevo de muelles ensacados.",
            "El té de manzanilla no me sabe a nada, prefiero el rooibos.",
        ],
        [
            "¿Qué descubrí que me estropea el descanso nocturno?",
            "¿Por qué me desvelo de madrugada últimamente?",
        ],
    ),
    _c(
        "guitar",
        "ocio",
        "Estoy aprendiendo a tocar Blackbird en la guitarra; el punteo del segundo verso me cuesta.",
        [
            "Cambié las cuerdas de la guitarra por unas de nailon más suaves.",
            "Fuimos al concierto de jazz del parque; el saxofonista era buenísimo.",
            "Mi sobrino quiere una batería electrónica por su cumpleaños.",
            "Vendí el amplificador viejo por 60 euros en segunda mano.",
        ],
        [
            "¿Qué canción de los Beatles estoy practicando y qué parte se me atasca?",
            "¿En qué tema de guitarra ando trabajando ahora?",
        ],
    ),
    _c(
        "garden_tomatoes",
        "ocio",
        "Las tomateras del huerto tienen mildiu; hay que tratarlas con cobre y quitar las hojas bajas.",
        [
            "Este año plantamos lechugas y pimientos en la terraza.",
            "La vecina nos regaló calabacines de su huerto.",
            "El riego por goteo se atascó y lo limpié con vinagre.",
            "Compré semillas de albahaca y perejil para el balcón.",
        ],
        [
            "¿Qué enfermedad tienen mis plantas de tomate y cómo se cura?",
            "¿Qué tengo que hacer con las matas enfermas del huerto?",
        ],
    ),
    _c(
        "laptop_battery",
        "tecnologia",
        "La batería del portátil del trabajo solo aguanta 40 minutos; soporte la cambia si abro un ticket.",
        [
            "El portátil de casa tarda tres minutos en arrancar; quizá le meta un SSD.",
            "Me llegó el cargador USB-C de 65 W que pedí para el móvil.",
            "El monitor de la oficina parpadea cuando conecto el HDMI.",
            "Actualicé el portátil a la última versión del sistema sin problemas.",
        ],
        [
            "¿Qué pasa con la autonomía del ordenador de la oficina y cómo se soluciona?",
            "¿Cómo consigo que me reemplacen la pila del laptop de la empresa?",
        ],
    ),
    _c(
        "mother_pills",
        "familia",
        "Mamá toma la pastilla de la tensión a las 9 de la mañana; si se le olvida se marea por la tarde.",
        [
            "Acompañé a mamá a la revisión de la vista; necesita gafas nuevas.",
            "Papá dejó de tomar azúcar en el café por el colesterol.",
            "La farmacia de guardia este fin de semana es la de la plaza.",
            "Mamá cumple 72 años el 9 de noviembre.",
        ],
        [
            "¿A qué hora debe tomar mi madre su medicina para la presión?",
            "¿Qué le pasa a mi madre cuando no se toma el medicamento?",
        ],
    ),
    _c(
        "savings_goal",
        "dinero",
        "Quiero ahorrar 6.000 euros antes de diciembre para la entrada de un coche eléctrico.",
        [
            "Tengo 1.200 euros en el fondo de emergencia, la meta son 3 meses de gastos.",
            "Cancelé dos suscripciones de streaming para gastar menos.",
            "Los coches eléctricos de segunda mano han bajado bastante este año.",
            "Mi hermano me devolvió los 300 euros que le presté.",
        ],
        [
            "¿Cuánto dinero me propuse juntar y para qué?",
            "¿Cuál es mi objetivo de ahorro de este año?",
        ],
    ),
    _c(
        "server_cert",
        "tecnologia",
        "El certificado TLS de git.casa.lan caduca el 2 de febrero; renovarlo con certbot a mano.",
        [
            "Instalé Nextcloud en el servidor de casa, pero va lento con fotos grandes.",
            "El router de casa se reinicia solo cuando hay tormenta.",
            "Cambié la contraseña del wifi de invitados.",
            "El servidor de casa gasta unos 25 W en reposo.",
        ],
        [
            "¿Cuándo vence el certificado del servidor de git y cómo lo renuevo?",
            "¿Qué se me va a caducar en el repositorio casero a principios de año?",
        ],
    ),
    _c(
        "daughter_school",
        "familia",
        "La tutora de Lucía dice que se distrae en matemáticas; quedamos en revisar los deberes cada tarde.",
        [
            "Lucía ganó el concurso de dibujo del colegio con un faro.",
            "La excursión de tercero al museo es el jueves; hay que pagar 8 euros.",
            "El comedor del colegio cambia de empresa en enero.",
            "Lucía quiere apuntarse a natación los martes.",
        ],
        [
            "¿Qué me contó la profesora sobre cómo va mi hija en clase?",
            "¿Qué acordamos con el colegio para las mates de la niña?",
        ],
    ),
    _c(
        "marathon_training",
        "ocio",
        "Para la media maratón de octubre sigo un plan de 12 semanas con tiradas largas los domingos.",
        [
            "Corrí 8 km por el río a 5:40 el kilómetro.",
            "Mi compañero Luis terminó su primera maratón en 3 horas 50.",
            "Me compré un reloj GPS para medir el ritmo.",
            "Estiro 10 minutos después de cada entreno de fuerza.",
        ],
        [
            "¿Cómo me estoy preparando para la carrera de 21 km?",
            "¿Qué programa de entrenamiento llevo para la prueba de otoño?",
        ],
    ),
    _c(
        "allergy",
        "salud",
        "Soy alérgico a la amoxicilina: me salió urticaria por todo el cuerpo en 2019.",
        [
            "En primavera el polen del olivo me hace estornudar sin parar.",
            "Lucía es intolerante a la lactosa, no a la leche en general.",
            "Tomé ibuprofeno para el dolor de muelas y me fue bien.",
            "El médico me recetó un antihistamínico para la picadura de avispa.",
        ],
        [
            "¿Qué antibiótico no puedo tomar?",
            "¿A qué medicamento tengo reacción alérgica?",
        ],
    ),
    _c(
        "taxes",
        "dinero",
        "Este año Hacienda me devuelve 480 euros; el gestor dice que llegará en julio.",
        [
            "Pagué el IBI del piso en dos plazos, junio y noviembre.",
            "Tengo que guardar las facturas de la reforma para desgravar.",
            "Mi hermano tuvo que pagar 900 euros en la renta por el alquiler.",
            "Hacienda mandó una carta por un error en la dirección.",
        ],
        [
            "¿Cuánto me devuelven de la declaración y cuándo me lo ingresan?",
            "¿Qué resultado tuvo mi renta este año?",
        ],
    ),
    _c(
        "python_bug",
        "trabajo",
        "El error de zona horaria en el informe de ventas venía de usar datetime.now() sin UTC en el cron.",
        [
            "Migré los scripts de informes de Python 3.9 a 3.11 sin cambios.",
            "El cron de las copias se ejecuta a las 3:15 cada noche.",
            "El informe de compras tarda 20 minutos por una consulta sin índice.",
            "Añadí tests al módulo de facturación; la cobertura sube al 70%.",
        ],
        [
            "¿Qué causaba que las horas del reporte de ventas salieran mal?",
            "¿Cuál era el origen del fallo de horario en el informe comercial?",
        ],
    ),
    _c(
        "spain_trip",
        "ocio",
        "Reservamos una casa rural en Cazorla del 10 al 15 de agosto; el dueño se llama Ramón.",
        [
            "El verano pasado fuimos a la playa de Conil y había demasiada gente.",
            "Tengo que renovar el pasaporte antes del viaje a Portugal en octubre.",
            "Mis suegros tienen un apartamento en Benidorm que nos dejan en septiembre.",
            "Los vuelos a Lisboa estaban a 40 euros en martes.",
        ],
        [
            "¿Dónde vamos de vacaciones en verano y en qué fechas?",
            "¿Qué alojamiento cogimos en la sierra para agosto?",
        ],
    ),
    _c(
        "gym_membership",
        "salud",
        "Me di de baja del gimnasio FitCenter; cobraban 45 euros y solo iba una vez por semana.",
        [
            "El gimnasio del barrio abre una sala nueva de spinning.",
            "Mi pareja se apuntó a pilates los lunes y miércoles.",
            "Hago sentadillas y flexiones en casa tres días por semana.",
            "El centro deportivo municipal cuesta 20 euros al mes.",
        ],
        [
            "¿Por qué dejé el club deportivo al que iba?",
            "¿Cuánto pagaba de cuota en el gym y sigo apuntado?",
        ],
    ),
    _c(
        "neighbor_leak",
        "hogar",
        "La vecina del quinto tiene una fuga en el baño que nos mancha el techo; el seguro manda un perito el lunes.",
        [
            "Pintamos el salón de blanco roto el fin de semana.",
            "El fontanero arregló la cisterna que goteaba por 60 euros.",
            "La comunidad aprobó cambiar el ascensor en marzo.",
            "El vecino del tercero hace obras por las mañanas.",
        ],
        [
            "¿Qué pasa con la humedad que tenemos arriba y quién viene a verla?",
            "¿Cuándo viene el perito por el agua que cae del piso de arriba?",
        ],
    ),
    _c(
        "book_club",
        "ocio",
        "En el club de lectura toca Cien años de soledad para el día 20; voy por el capítulo 6.",
        [
            "Terminé la novela de Murakami que me prestó Sara; no me convenció.",
            "La biblioteca municipal amplió el horario hasta las nueve.",
            "Compré un lector electrónico para leer en el tren.",
            "El club de cine del barrio pone películas francesas los jueves.",
        ],
        [
            "¿Qué libro tengo que leer para la próxima reunión literaria?",
            "¿Por dónde voy con la lectura que toca en el grupo de lectores?",
        ],
    ),
    _c(
        "english_cloud_bill",
        "tecnologia",
        "The cloud bill jumped to 310 dollars because a forgotten GPU instance ran all weekend.",
        [
            "I moved the photo archive to cold storage to save a few dollars a month.",
            "The staging database was upgraded to Postgres 16 without downtime.",
            "Our domain renewal costs 14 dollars a year.",
            "I set a budget alert at 100 dollars in the cloud console.",
        ],
        [
            "Why was the hosting invoice so high this month?",
            "What made the cloud costs spike?",
        ],
    ),
    _c(
        "english_visa",
        "trabajo",
        "My visa appointment at the US consulate in Madrid is on 3 March at 8:30; bring the DS-160 page.",
        [
            "The conference in Boston reimburses hotels up to 180 dollars a night.",
            "I renewed my passport last year; it expires in 2034.",
            "Laura got her work visa for Canada in only two weeks.",
            "The flight to New York has a layover in Dublin.",
        ],
        [
            "When is my interview for the American travel permit and what do I need?",
            "What document should I take to the embassy meeting?",
        ],
    ),
    _c(
        "english_knee_physio",
        "salud",
        "Physio said my shoulder pain comes from sitting hunched at the desk; raise the monitor 10 cm.",
        [
            "I booked a massage for Saturday after the long run.",
            "The ergonomic chair at work has a broken armrest.",
            "My brother hurt his shoulder playing tennis.",
            "I started doing yoga stretches before bed.",
        ],
        [
            "What did the physiotherapist say is causing my upper arm ache?",
            "How should I change my workstation to stop the shoulder hurting?",
        ],
    ),
    _c(
        "english_side_project",
        "trabajo",
        "For the bird-sound app I decided to use on-device inference; no audio ever leaves the phone.",
        [
            "The bird app logo was designed by my friend Ana.",
            "I recorded blackbirds in the park at 6 am for the test set.",
            "The app store fee is 99 dollars a year.",
            "A user asked for dark mode in the bird app.",
        ],
        [
            "Where does the birdsong recognition run, and why?",
            "Do recordings from my bird identification app get uploaded?",
        ],
    ),
    _c(
        "father_surgery",
        "familia",
        "A papá le operan de cataratas el 22 de enero en el hospital de la Paz; le llevo yo.",
        [
            "Papá se jubiló hace tres años y ahora pinta acuarelas.",
            "Mi suegro tiene revisión de la próstata en febrero.",
            "El hospital cambió el sistema de citas a una app.",
            "Papá quiere cambiar las gafas de cerca por unas progresivas.",
        ],
        [
            "¿Cuándo es la operación de los ojos de mi padre y quién le acompaña?",
            "¿Qué día interviene a mi padre el oftalmólogo?",
        ],
    ),
    _c(
        "electric_bill",
        "hogar",
        "La factura de la luz subió a 130 euros por el radiador eléctrico del despacho.",
        [
            "Cambiamos todas las bombillas de casa por LED.",
            "La compañía del gas manda la lectura del contador cada dos meses.",
            "Instalamos un termostato inteligente en el salón.",
            "El recibo del agua llegó con 35 euros, lo normal.",
        ],
        [
            "¿Por qué pagamos tanto de electricidad este mes?",
            "¿Qué aparato dispara el consumo eléctrico en casa?",
        ],
    ),
    _c(
        "password_manager",
        "tecnologia",
        "Las contraseñas del banco y del correo están en Bitwarden; la clave maestra la sabe también Elena.",
        [
            "Activé la verificación en dos pasos en la cuenta de Google.",
            "Elena olvidó la contraseña del router y tuvimos que resetearlo.",
            "El antivirus caducó y no lo renové.",
            "Cambié el PIN de la tarjeta en el cajero.",
        ],
        [
            "¿Dónde guardo las claves de acceso importantes y quién más puede abrirlas?",
            "¿En qué gestor están mis contraseñas?",
        ],
    ),
    _c(
        "team_conflict",
        "trabajo",
        "Hubo tensión entre Jorge y Nuria por quién lleva la integración de pagos; lo resolvemos el jueves con Marta.",
        [
            "Nuria presentó la nueva pasarela de pagos al comité.",
            "Jorge se va a trabajar en remoto desde Asturias dos meses.",
            "El equipo de pagos contrató a dos personas más.",
            "Comimos todo el equipo en el restaurante vasco para despedir a Pablo.",
        ],
        [
            "¿Qué problema hay entre dos compañeros del equipo y cuándo se habla?",
            "¿Quién discute por el módulo de cobros?",
        ],
    ),
    _c(
        "cooking_paella",
        "ocio",
        "El truco de la paella de la abuela: sofrito largo, caldo el doble que arroz y no remover.",
        [
            "Hicimos una barbacoa en casa de Sergio con costillas.",
            "Probé una receta de risotto de setas; quedó pastoso.",
            "Compré una paellera de 40 cm en el mercado.",
            "El restaurante de arroces del puerto cierra los lunes.",
        ],
        [
            "¿Cuál es el secreto del arroz que hacía mi abuela?",
            "¿Cómo me sale bien el plato valenciano según la receta familiar?",
        ],
    ),
    _c(
        "anxiety",
        "salud",
        "La psicóloga me propuso respirar 4-7-8 cuando me entra ansiedad antes de las reuniones.",
        [
            "Empecé a escribir un diario por las noches, de momento tres días seguidos.",
            "Tengo una reunión difícil con el cliente el lunes.",
            "Mi amiga Sara dejó la terapia porque le salía cara.",
            "Medito diez minutos con una app antes de dormir.",
        ],
        [
            "¿Qué técnica me recomendó la terapeuta para los nervios?",
            "¿Qué puedo hacer cuando me agobio antes de una junta?",
        ],
    ),
    _c(
        "crypto_wallet",
        "dinero",
        "La frase semilla de la cartera fría está en un sobre en la caja fuerte, nunca en el ordenador.",
        [
            "Pasé 0,05 BTC del exchange a la cartera fría.",
            "El exchange pide verificar la identidad otra vez.",
            "La caja fuerte del armario tiene las escrituras del piso.",
            "Leí que han hackeado otro exchange pequeño.",
        ],
        [
            "¿Dónde tengo apuntadas las palabras de recuperación del monedero?",
            "¿Cómo guardo el respaldo de mi wallet de criptomonedas?",
        ],
    ),
    _c(
        "friend_birthday",
        "familia",
        "A Sara le regalamos por su cumpleaños una clase de cerámica; le encanta hacer tazas.",
        [
            "Sara se muda a Bilbao en primavera por trabajo.",
            "Para el cumpleaños de Lucía alquilamos un castillo hinchable.",
            "Fuimos a un taller de cerámica y se nos rompió la pieza en el horno.",
            "Sara y yo nos conocemos desde el instituto.",
        ],
        [
            "¿Qué le dimos de regalo a mi amiga en su aniversario?",
            "¿Qué detalle tuvimos con Sara cuando cumplió años?",
        ],
    ),
    _c(
        "home_wifi",
        "tecnologia",
        "El wifi no llega al despacho; el repetidor mesh va bien si lo pongo en el pasillo y no en el salón.",
        [
            "La fibra de casa es de 600 megas simétricos.",
            "El router nuevo tiene cuatro antenas y puerto de 2,5 gigas.",
            "La tele del salón se desconecta de Netflix a veces.",
            "Pasé un cable de red al cuarto de Lucía para la consola.",
        ],
        [
            "¿Dónde conviene colocar el amplificador de la red inalámbrica?",
            "¿Cómo arreglé la falta de cobertura en la habitación donde trabajo?",
        ],
    ),
    _c(
        "promotion",
        "trabajo",
        "Me ofrecieron liderar el equipo de datos desde abril; tengo que responder antes del 15.",
        [
            "El equipo de datos usa Airflow para las cargas nocturnas.",
            "A Nuria la ascendieron a directora de producto.",
            "Hice un curso de liderazgo online de seis semanas.",
            "La empresa abre oficina en Valencia el año que viene.",
        ],
        [
            "¿Qué puesto nuevo me han propuesto y cuándo debo contestar?",
            "¿Hasta cuándo tengo para decidir si acepto ser jefe del grupo de analítica?",
        ],
    ),
    _c(
        "vaccination",
        "salud",
        "Me toca la dosis de recuerdo del tétanos; la última fue en 2014.",
        [
            "Vacunamos a Lucía de la gripe en el centro de salud.",
            "El centro de salud cambió el horario de enfermería.",
            "Me hice un análisis de sangre: el hierro un poco bajo.",
            "Para viajar a Tailandia recomiendan la vacuna de la hepatitis A.",
        ],
        [
            "¿Qué vacuna tengo pendiente y cuándo me pusieron la anterior?",
            "¿Hace cuánto que no me pongo la inyección contra el tétanos?",
        ],
    ),
    _c(
        "english_chess",
        "ocio",
        "My chess rating climbed to 1520 after I started studying the Caro-Kann defence every morning.",
        [
            "I watched the world championship game with my nephew.",
            "The chess club meets on Thursdays at the library.",
            "I lost three blitz games in a row on Sunday.",
            "Bought a wooden chess set at the flea market for 25 euros.",
        ],
        [
            "What opening have I been working on, and did my Elo improve?",
            "How did my online chess ranking change lately?",
        ],
    ),
    _c(
        "insurance_claim",
        "dinero",
        "El seguro rechazó el parte del móvil roto porque la póliza no cubre caídas; reclamar por escrito.",
        [
            "Contraté un seguro de viaje para las vacaciones en Cazorla.",
            "El móvil nuevo tiene funda de silicona y protector de pantalla.",
            "La aseguradora del coche sube la prima un 8%.",
            "Me devolvieron el dinero de unos auriculares defectuosos.",
        ],
        [
            "¿Qué dijeron de la reclamación por el teléfono que se me cayó?",
            "¿Por qué no me pagan el arreglo de la pantalla del celular?",
        ],
    ),
    _c(
        "kid_allergy_food",
        "familia",
        "Al pequeño Hugo le sentaron mal los frutos secos; el pediatra pidió pruebas de alergia el día 9.",
        [
            "Hugo empezó la guardería y llora al despedirse.",
            "Compramos una trona nueva para Hugo.",
            "El pediatra dijo que Hugo va bien de peso y talla.",
            "A Lucía le encantan las almendras garrapiñadas.",
        ],
        [
            "¿Qué le pasó a mi hijo pequeño con las nueces y qué pidió el médico?",
            "¿Cuándo le hacen a Hugo el test por la reacción a la comida?",
        ],
    ),
    _c(
        "bike_theft",
        "hogar",
        "Me robaron la bici del portal; puse la denuncia en la comisaría y el número es 2291/25.",
        [
            "Compré un candado en U para la bici nueva.",
            "Arreglé el pinchazo de la rueda trasera yo mismo.",
            "El ayuntamiento pone un carril bici nuevo por la avenida.",
            "Le dejé la bici a mi sobrino para el verano.",
        ],
        [
            "¿Qué pasó con mi bicicleta y qué número tiene el atestado?",
            "¿Hice algo legal cuando desapareció mi bici?",
        ],
    ),
    _c(
        "freelance_invoice",
        "dinero",
        "La agencia Pixel me debe la factura de 1.850 euros de septiembre; segundo aviso enviado el lunes.",
        [
            "Emití la factura de octubre a Textiles Ruiz con el IVA correcto.",
            "La agencia Pixel quiere otro proyecto de diseño en enero.",
            "Pagué la cuota de autónomos de noviembre.",
            "Abrí una cuenta separada para los ingresos del freelance.",
        ],
        [
            "¿Qué cliente no me ha pagado todavía y cuánto es?",
            "¿Cuánto me adeudan por el trabajo de otoño para la agencia?",
        ],
    ),
    _c(
        "diet_doctor",
        "salud",
        "El médico me pidió bajar la sal por la tensión alta: 145/95 en la última toma.",
        [
            "Hago una lista de la compra semanal para comer mejor.",
            "Mi padre controla el azúcar con una app del móvil.",
            "Dejé los refrescos hace un mes.",
            "Compré un tensiómetro de muñeca en la farmacia.",
        ],
        [
            "¿Qué cambio de alimentación me mandó el doctor y por qué?",
            "¿Cómo tenía la presión arterial en el último control?",
        ],
    ),
    _c(
        "photo_hobby",
        "ocio",
        "Para fotos nocturnas de la Vía Láctea uso el 14 mm a f/2.8, 20 segundos e ISO 3200.",
        [
            "Vendí el objetivo de 50 mm porque casi no lo usaba.",
            "Imprimí las fotos del viaje en un álbum de 40 páginas.",
            "La cámara del móvil hace fotos nocturnas bastante decentes.",
            "Me apunté a un concurso de fotografía de paisaje.",
        ],
        [
            "¿Qué ajustes de cámara funcionan para fotografiar las estrellas?",
            "¿Con qué exposición saco la galaxia de noche?",
        ],
    ),
    _c(
        "rent_flat",
        "hogar",
        "El contrato del piso de alquiler de la calle Olmo vence en mayo y la casera quiere subir 70 euros.",
        [
            "Miramos pisos de compra en las afueras; todo está carísimo.",
            "El inquilino del bajo se quejó del ruido.",
            "La calle Olmo estará cortada por obras en junio.",
            "Pagamos la fianza de dos meses cuando entramos.",
        ],
        [
            "¿Cuándo termina el arrendamiento y cuánto quiere aumentar la propietaria?",
            "¿Qué subida nos pide la dueña del piso?",
        ],
    ),
)

# -- filler: ordinary days -----------------------------------------------------------------
_NAMES = [
    "Laura",
    "Pablo",
    "Nuria",
    "Iván",
    "Rocío",
    "Álvaro",
    "Begoña",
    "Tomás",
    "Inés",
    "Raúl",
    "Marina",
    "Óscar",
    "Pilar",
    "Gonzalo",
    "Celia",
    "Héctor",
    "Ainhoa",
    "Rubén",
    "Noelia",
    "Fernando",
    "Irene",
    "Adrián",
    "Lorena",
    "Samuel",
    "Patricia",
]
_PLACES = [
    "el Retiro",
    "la playa",
    "el centro",
    "el pueblo",
    "Toledo",
    "Segovia",
    "la sierra",
    "el mercado",
    "la plaza Mayor",
    "el río",
    "Cuenca",
    "Salamanca",
    "el lago",
    "el puerto",
]
_FOODS = [
    "tortilla",
    "lentejas",
    "gazpacho",
    "croquetas",
    "pasta",
    "pescado al horno",
    "pollo asado",
    "ensalada",
    "sushi",
    "pizza casera",
    "fabada",
    "pisto",
    "salmorejo",
    "empanada",
]
_WORK_TOPICS = [
    "el presupuesto del trimestre",
    "la migración del CRM",
    "el plan de formación",
    "las vacaciones del equipo",
    "el nuevo proveedor de nóminas",
    "la auditoría interna",
    "los objetivos de ventas",
    "el rediseño de la web",
    "la oficina nueva",
    "el contrato de limpieza",
    "las métricas de soporte",
    "el inventario del almacén",
]
_HOBBIES = [
    "pádel",
    "natación",
    "yoga",
    "ajedrez en el club",
    "escalada",
    "dibujo",
    "cerámica",
    "senderismo",
    "bici de montaña",
    "piano",
    "crochet",
    "baloncesto",
]
_SHOPS = [
    "el supermercado",
    "la ferretería",
    "la librería",
    "la frutería",
    "la tienda de deportes",
    "el mercadillo",
    "la droguería",
    "la papelería",
    "la tienda de electrónica",
]
_ITEMS = [
    "una lámpara",
    "unas zapatillas",
    "un paraguas",
    "una sartén",
    "unas toallas",
    "un cuaderno",
    "una mochila",
    "unas macetas",
    "un cable HDMI",
    "una alfombra",
    "unos auriculares",
    "una chaqueta",
]
_SERIES = [
    "una serie de detectives",
    "un documental de ballenas",
    "una película coreana",
    "un concurso de cocina",
    "una comedia italiana",
    "un western antiguo",
]
_WEEKDAYS = ["lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"]
_EN_NAMES = ["Tom", "Emma", "Oliver", "Grace", "Liam", "Chloe", "Noah", "Ella", "James", "Ruby"]
_EN_THINGS = [
    "the quarterly report",
    "the onboarding docs",
    "the API rate limits",
    "the new intern",
    "the office plants",
    "the team offsite",
    "the hiring plan",
    "the bug triage rota",
]
_EN_HOBBIES = ["bouldering", "baking sourdough", "watercolour", "birdwatching", "cycling", "tennis"]

_FILLER: tuple[tuple[str, str, str], ...] = (
    (
        "trabajo",
        "work_meeting",
        "Reunión con {name} sobre {work}; quedamos en volver a hablarlo el {weekday}.",
    ),
    ("trabajo", "work_mail", "Contesté {n} correos atrasados y cerré {m} tickets antes de comer."),
    ("trabajo", "work_lunch", "Comí con {name} en la cantina; hablamos de {work}."),
    ("trabajo", "work_day", "Jornada de {n} horas; lo mejor del día fue terminar lo de {work}."),
    ("familia", "family_call", "Llamé a {name} por la tarde; está bien y manda recuerdos."),
    ("familia", "family_meal", "Comida familiar en casa de {name}: {food} y sobremesa larga."),
    ("familia", "family_walk", "Paseo con los niños por {place}; volvimos a las {h}."),
    ("familia", "family_visit", "{name} vino a casa el {weekday} y se quedó a cenar {food}."),
    ("salud", "health_walk", "Caminé {n} pasos hoy, bastante más que la semana pasada."),
    ("salud", "health_water", "Intento beber {m} vasos de agua al día; hoy lo cumplí."),
    ("salud", "health_cold", "Tengo un resfriado leve desde el {weekday}; nada grave."),
    ("salud", "health_sleep", "Anoche dormí {h} horas seguidas y hoy tengo más energía."),
    ("dinero", "money_shop", "Gasté {n} euros en {shop}: {item} y poco más."),
    ("dinero", "money_budget", "Revisé el presupuesto del mes: van {n} euros en comida."),
    ("dinero", "money_sale", "Vendí {item} de segunda mano por {m} euros."),
    ("ocio", "hobby_class", "Clase de {hobby} el {weekday}; salí cansado pero contento."),
    ("ocio", "hobby_series", "Por la noche vimos {series}; {verdict}."),
    ("ocio", "hobby_trip", "Excursión de un día a {place} con {name}; hizo {weather}."),
    ("ocio", "hobby_cook", "Cociné {food} para cenar y sobró para mañana."),
    ("hogar", "home_buy", "Compré {item} en {shop} para la casa."),
    ("hogar", "home_clean", "Limpieza general del {room}; tardamos {h} horas."),
    ("hogar", "home_fix", "Arreglé {fix} con lo que había en la caja de herramientas."),
    ("trabajo", "en_work", "Synced with {en_name} about {en_thing}; follow-up on {weekday_en}."),
    ("ocio", "en_hobby", "Spent {h} hours {en_hobby} on Saturday; really enjoyed it."),
    (
        "familia",
        "en_family",
        "Video call with {en_name} from London; they are visiting in {month_en}.",
    ),
    ("dinero", "en_money", "Paid {n} euros for {en_thing_buy} this week."),
)
_VERDICTS = ["muy recomendable", "floja", "entretenida", "demasiado larga", "nos encantó"]
_WEATHER = ["sol", "viento", "frío", "calor", "niebla", "un día perfecto"]
_ROOMS = ["salón", "garaje", "trastero", "balcón", "armario del pasillo", "cuarto de baño"]
_FIXES = [
    "la puerta del armario",
    "el enchufe de la cocina",
    "la persiana del dormitorio",
    "la pata de la mesa",
    "el grifo del lavabo",
    "el pomo de la entrada",
]
_EN_WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
_EN_MONTHS = ["April", "May", "June", "July", "September"]
_EN_BUY = ["a bike helmet", "new headphones", "concert tickets", "a rain jacket", "board games"]


def _fill(template: str, rng: random.Random) -> str:
    slots = {
        "name": rng.choice(_NAMES),
        "place": rng.choice(_PLACES),
        "food": rng.choice(_FOODS),
        "work": rng.choice(_WORK_TOPICS),
        "hobby": rng.choice(_HOBBIES),
        "shop": rng.choice(_SHOPS),
        "item": rng.choice(_ITEMS),
        "series": rng.choice(_SERIES),
        "weekday": rng.choice(_WEEKDAYS),
        "verdict": rng.choice(_VERDICTS),
        "weather": rng.choice(_WEATHER),
        "room": rng.choice(_ROOMS),
        "fix": rng.choice(_FIXES),
        "en_name": rng.choice(_EN_NAMES),
        "en_thing": rng.choice(_EN_THINGS),
        "en_hobby": rng.choice(_EN_HOBBIES),
        "weekday_en": rng.choice(_EN_WEEKDAYS),
        "month_en": rng.choice(_EN_MONTHS),
        "en_thing_buy": rng.choice(_EN_BUY),
        "n": str(rng.randint(3, 12_000)),
        "m": str(rng.randint(2, 90)),
        "h": str(rng.randint(2, 11)),
    }
    return template.format(**slots)


def _day(rng: random.Random) -> str:
    return f"2026-{rng.randint(1, 10):02d}-{rng.randint(1, 28):02d}"


def build(filler: int = 2_000, seed: int = SEED) -> EvalSet:
    """The set: every case (target, look-alikes, questions) plus ``filler`` ordinary memories."""
    rng = random.Random(seed)
    out = EvalSet()
    for n, case in enumerate(CASES):
        split = "tune" if n % 2 == 0 else "heldout"
        target_id = f"{case.key}:target"
        texts = [(target_id, case.target)] + [
            (f"{case.key}:look{i}", t) for i, t in enumerate(case.lookalikes)
        ]
        for mid, text in texts:
            via = "log" if rng.random() < 0.5 else "add"
            out.memories.append(EvalMemory(mid, text, case.key, case.theme, via, _day(rng)))
        for q in case.questions:
            out.queries.append(EvalQuery(q, target_id, case.key, split))
    seen = {m.content for m in out.memories}
    made = 0
    while made < filler:
        theme, key, template = rng.choice(_FILLER)
        text = _fill(template, rng)
        if text in seen:
            continue
        seen.add(text)
        via = "log" if rng.random() < 0.7 else "add"
        out.memories.append(
            EvalMemory(f"filler{made}", text, f"filler:{key}", theme, via, _day(rng))
        )
        made += 1
    rng.shuffle(out.memories)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--filler", type=int, default=2_000)
    ns = parser.parse_args()
    data = build(ns.filler)
    ns.out.mkdir(parents=True, exist_ok=True)
    with (ns.out / "memories.jsonl").open("w", encoding="utf-8") as fh:
        for m in data.memories:
            fh.write(json.dumps(m.__dict__, ensure_ascii=False) + "\n")
    with (ns.out / "queries.jsonl").open("w", encoding="utf-8") as fh:
        for q in data.queries:
            fh.write(json.dumps(q.__dict__, ensure_ascii=False) + "\n")
    print(f"{len(data.memories)} memories, {len(data.queries)} queries in {ns.out}")


if __name__ == "__main__":
    main()
