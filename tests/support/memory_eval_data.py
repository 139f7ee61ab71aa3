"""A synthetic, deterministic memory set for ranking evaluation: one person's life.

Run ``python -m tests.support.memory_eval_data --out DIR`` to write it as JSONL; tests call
``build()`` directly. Everything comes from the hand-written cases and templates below and a
seeded ``random.Random``: the same set on every machine.

- **Cases**: a memory that answers a question (``target``), four or more near-topic
  look-alikes (same subject, other details: the trap a small model falls into), and two
  questions that paraphrase the target rather than copy it. Cases alternate between the
  ``tune`` and the ``heldout`` split, so the cut is calibrated on one half and reported on
  both. A third split, ``unseen`` (``UNSEEN_CASES``), was written apart in another manner
  (look-alikes as long as their targets, chat-like questions) and is only ever measured:
  no fit reads it and its misses are not printed while tuning.
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
    split: str  # "tune" | "heldout" | "unseen"


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
            "Tengo 1.200 euros en el fondo de emergencia y de momento no lo he tocado.",
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

# -- unseen: a third split, written apart ---------------------------------------------------
#: Cases by another hand, kept out of every fit and every reading of misses: look-alikes as
#: long as their targets (the first splits' targets are their longest texts, a key a length
#: feature would learn), look-alikes that share the question's words while the answer
#: paraphrases them, questions asked the way a person writes to a chat ("oye", "recuérdame",
#: "dime", no accents), about a fifth in English.
UNSEEN_CASES: tuple[Case, ...] = (
    _c(
        "u_boiler",
        "hogar",
        "Ojo: la caldera pierde presión cada semana; el técnico dice que es el vaso de expansión.",
        [
            "La caldera se revisó en octubre y el técnico no encontró nada raro en la presión.",
            "Hay que purgar los radiadores del pasillo antes de encender la calefacción este año.",
            "El técnico del aire acondicionado viene el jueves a cargar el gas del split del salón.",
            "Subí el termostato a 21 grados porque los niños tenían frío por las noches esta semana.",
        ],
        [
            "Oye, ¿qué pieza de la calefacción está fallando según el que vino a mirarla?",
            "Recuérdame por qué tengo que rellenar el agua del calentador tan a menudo.",
        ],
    ),
    _c(
        "u_nephew_gift",
        "familia",
        "Para la comunión de Daniel le compramos entre todos un telescopio; yo pongo 50 euros.",
        [
            "Daniel me pidió un balón de fútbol firmado, pero eso ya se lo regaló su abuelo.",
            "La comunión de mi prima fue en mayo y el banquete se alargó hasta la noche.",
            "Compré un telescopio pequeño para mirar la luna desde la terraza del pueblo.",
            "Pusimos 50 euros cada uno para la cena de despedida de Tomás en el trabajo.",
        ],
        [
            "¿Qué regalo hacemos al sobrino por su primera comunión y cuánto me toca?",
            "Dime cuánto tengo que aportar para el regalo conjunto de Daniel.",
        ],
    ),
    _c(
        "u_cholesterol",
        "salud",
        "Analítica de junio: LDL 168; la doctora quiere repetirla en tres meses antes de pastillas.",
        [
            "En la analítica de enero salió todo bien salvo la vitamina D, que estaba algo baja.",
            "Mi padre toma estatinas desde hace años y dice que le dan dolor muscular en las piernas.",
            "La doctora me cambió el horario de la consulta a los miércoles por la tarde, a las cinco.",
            "Repetí la prueba de la glucosa en ayunas hace tres meses y salió normal, 92.",
        ],
        [
            "¿Cómo salieron mis grasas en sangre en el último chequeo y qué plan hay?",
            "¿Me van a mandar medicación para el colesterol o todavía no?",
        ],
    ),
    _c(
        "u_landlord_deposit",
        "dinero",
        "El casero del piso de Triana aún no nos devuelve los 900 de la fianza; le mandé un burofax.",
        [
            "La fianza del piso nuevo son dos mensualidades y la depositamos en la Junta en junio.",
            "El casero de Triana arregló por fin la persiana del dormitorio en marzo, tras tres avisos.",
            "Mandé un burofax a la compañía telefónica por la permanencia que me cobraron mal.",
            "Nos devolvieron 90 euros del seguro del hogar por el cambio de póliza de este año.",
        ],
        [
            "¿Recuperamos ya el depósito del piso de antes?",
            "¿Cómo reclamé el dinero que nos debe el dueño del apartamento anterior?",
        ],
    ),
    _c(
        "u_oncall",
        "trabajo",
        "Me toca la guardia de producción la semana del 8; si salta una alerta de noche llamo a Iker.",
        [
            "Las guardias se pagan a 40 euros el día desde el nuevo convenio firmado este año.",
            "Iker me enseñó a reiniciar el balanceador cuando se queda colgado por la noche.",
            "La semana del 8 tengo el curso de Kubernetes por las mañanas, en remoto desde casa.",
            "Saltó una alerta de disco lleno en el servidor de pruebas el domingo de madrugada.",
        ],
        [
            "¿Cuándo estoy de retén y a quién aviso si algo se rompe de madrugada?",
            "Who do I escalate to during my on-call week?",
        ],
    ),
    _c(
        "u_plant_cat",
        "hogar",
        "Quité el lirio del salón: es tóxico para Misha, la gata; el veterinario lo recomendó.",
        [
            "Misha tiene la vacuna anual en diciembre y hay que llevarla al veterinario en ayunas.",
            "Compramos un ficus grande para el rincón del salón, junto a la ventana que da al patio.",
            "El veterinario dice que Misha está un poco gorda y le cambió el pienso por uno ligero.",
            "Las orquídeas del baño florecieron otra vez este invierno, y eso que casi no las riego.",
        ],
        [
            "¿Qué planta saqué de casa por la gata y por qué?",
            "¿Hay alguna flor que sea peligrosa para mi mascota que ya haya quitado?",
        ],
    ),
    _c(
        "u_flight_refund",
        "dinero",
        "Iberia cancelo el vuelo a Roma; tardan 7 dias habiles en devolverme los 236 euros.",
        [
            "El vuelo a Roma de mis padres sale a las seis de la mañana del viernes que viene.",
            "Pedí el reembolso de las entradas del concierto cancelado y ya me llegó a la cuenta.",
            "Iberia me cobró 40 euros por la maleta facturada en el viaje a Lisboa del verano.",
            "Tengo 236 euros de saldo en la tarjeta regalo de la tienda de muebles del centro.",
        ],
        [
            "¿Cuándo me devuelven lo del viaje a Italia que anularon?",
            "¿Cuánto dinero me tiene que reingresar la aerolínea?",
        ],
    ),
    _c(
        "u_spanish_class",
        "ocio",
        "I teach Spanish to Emma on Wednesdays; ser vs estar is hard for her, so we drill it first.",
        [
            "Emma invited us to her flat on Wednesday for a board game night with her flatmates.",
            "I signed up for a French course on Tuesdays at the language school near the office.",
            "My own teacher says my pronunciation of the English th sound has improved a lot.",
            "We watched a Spanish film with subtitles on Sunday to practise listening together.",
        ],
        [
            "What grammar point is hard for my student, and what do we do about it?",
            "¿Qué le cuesta a Emma en las clases que le doy?",
        ],
    ),
    _c(
        "u_water_heater",
        "hogar",
        "El termo eléctrico de 80 litros tiene 12 años; el fontanero aconseja cambiarlo ya.",
        [
            "El fontanero cobró 70 euros por desatascar el fregadero de la cocina el sábado.",
            "Cambiamos el grifo de la ducha por uno termostático el mes pasado, va muy bien.",
            "La lavadora tiene 12 años pero funciona perfecta, así que no pienso cambiarla.",
            "Antes del invierno hay que sellar las ventanas del dormitorio, que entra aire.",
        ],
        [
            "¿Qué aparato del agua caliente está viejo y qué me recomendaron?",
            "¿Debería sustituir el calentador de la casa pronto?",
        ],
    ),
    _c(
        "u_manager_1on1",
        "trabajo",
        "En el uno a uno Raquel me pidió documentar la API de pagos antes de que entre gente.",
        [
            "Raquel se incorporó como responsable del área de pagos en septiembre, viene de un banco.",
            "La API de pagos pasa a la versión 3 en enero y hay que avisar antes a los clientes.",
            "En el uno a uno hablamos de mis vacaciones de Navidad y de poco más, fue muy corto.",
            "Va a entrar gente nueva en soporte: dos personas en enero y otra más en febrero.",
        ],
        [
            "¿Qué tarea me encargó mi jefa en nuestra última charla a solas?",
            "What does Raquel want written up before the new hires start?",
        ],
    ),
    _c(
        "u_grandma_hospital",
        "familia",
        "La abuela Pepa está ingresada en la 412; las visitas son de 17 a 20.",
        [
            "La abuela Pepa cumple 90 el mes que viene y queremos hacerle una fiesta sorpresa.",
            "El hospital del barrio tiene el aparcamiento en obras hasta el verano, fatal.",
            "Visité a mi tío en la residencia; está más animado que la última vez que fui.",
            "La habitación 412 del hotel de Cádiz tenía unas vistas al mar preciosas.",
        ],
        [
            "¿En qué cuarto está mi abuela y a qué hora puedo ir a verla?",
            "¿Cuál es el horario para visitar a la yaya en el hospital?",
        ],
    ),
    _c(
        "u_car_noise",
        "hogar",
        "El ruido metálico al frenar eran las pastillas delanteras; cambiadas por 120 euros.",
        [
            "El coche hace un ruido raro en el maletero cuando paso por los baches del camino.",
            "Las ruedas delanteras están al límite; hay que cambiarlas antes del viaje largo.",
            "Pagamos 120 euros por la revisión de los 60.000 km en el concesionario oficial.",
            "Al arrancar en frío el motor suena más de lo normal durante unos segundos.",
        ],
        [
            "¿Qué era el chirrido que hacía el coche al pisar el freno?",
            "¿Cuánto me costó arreglar los frenos?",
        ],
    ),
    _c(
        "u_podcast",
        "ocio",
        "Grabamos el episodio 12 del pódcast con Lola; falta editarlo y subirlo antes del lunes.",
        [
            "Escuché un pódcast de historia sobre los romanos mientras corría por el parque.",
            "Lola se compró un micrófono nuevo para las reuniones en remoto, suena genial.",
            "El episodio 11 tuvo 400 escuchas, el doble que el anterior; vamos creciendo.",
            "Tengo que subir las fotos de la excursión al álbum compartido antes del lunes.",
        ],
        [
            "¿Qué me queda por hacer con el último programa que grabé?",
            "¿Para cuándo tiene que estar publicado el nuevo capítulo?",
        ],
    ),
    _c(
        "u_server_ram",
        "tecnologia",
        "The home server crashes at night: Jellyfin transcoding eats all 8 GB of RAM. Add swap.",
        [
            "I upgraded the laptop to 16 GB of RAM last week and it feels much faster now.",
            "The home server backs up the photos to the NAS every night at two in the morning.",
            "Jellyfin added subtitle support for the kids' cartoons in the last update.",
            "The router crashes when too many devices join the guest network at parties.",
        ],
        [
            "Why does the media box at home keep dying overnight?",
            "¿Qué se come la memoria del servidor de casa?",
        ],
    ),
    _c(
        "u_tax_freelance",
        "dinero",
        "El modelo 303 del tercer trimestre sale a pagar 412 euros; plazo hasta el día 20.",
        [
            "El modelo 130 de este trimestre sale a cero porque tuve muy pocos ingresos.",
            "Tengo que pagar 412 euros del seguro del coche en un solo recibo en octubre.",
            "La gestoría cierra el día 20 por la tarde porque tienen una formación interna.",
            "Revisé las facturas del tercer trimestre: faltan dos de proveedores por llegar.",
        ],
        [
            "¿Cuánto IVA tengo que ingresar este trimestre y hasta cuándo?",
            "¿Qué impuesto trimestral me toca pagar y de cuánto es?",
        ],
    ),
    _c(
        "u_hearing",
        "salud",
        "La audiometría salió regular en el oído izquierdo; el otorrino la repite en mayo y pide no usar cascos.",
        [
            "El otorrino le quitó a Hugo un tapón de cera del oído derecho en cinco minutos.",
            "Me compré unos cascos con cancelación de ruido para el tren de las mañanas.",
            "Mi abuelo lleva audífonos desde los 70 y dice que ahora oye mejor la tele.",
            "En mayo tengo la revisión de la vista del carné de conducir en el centro médico.",
        ],
        [
            "¿Qué me dijo el especialista del oído y cuándo repito la prueba?",
            "¿Qué me pidió el médico de los oídos hasta la próxima prueba de audición?",
        ],
    ),
    _c(
        "u_kid_id",
        "familia",
        "El DNI de Lucía caduca en enero; cita en la comisaría el 3 de diciembre a las 10:40.",
        [
            "Lucía perdió la tarjeta del transporte y hay que pedir otra en la oficina del metro.",
            "Mi DNI caduca en 2031, así que no me tengo que preocupar por eso hasta dentro de años.",
            "La comisaría de la avenida cambió de horario y ya no abre por las tardes.",
            "El 3 de diciembre es la función de Navidad del colegio; Lucía hace de pastora.",
        ],
        [
            "¿Cuándo hay que renovar el carné de identidad de mi hija?",
            "¿A qué hora es la cita para el documento de la niña?",
        ],
    ),
    _c(
        "u_garden_hedge",
        "hogar",
        "Con el jardinero: podar el seto del chalet en febrero, no antes, por los nidos.",
        [
            "El seto del vecino invade nuestra acera y ya se lo dijimos dos veces, sin éxito.",
            "El jardinero cobra 25 euros la hora y trae sus propias herramientas y la escalera.",
            "En febrero toca abonar los frutales del patio de atrás con estiércol del pueblo.",
            "Vimos nidos de golondrina debajo del tejado del garaje; no hay que tocarlos.",
        ],
        [
            "¿Cuándo hay que recortar los arbustos y por qué esperamos?",
            "¿Qué acordamos sobre la poda con la persona que cuida el jardín?",
        ],
    ),
    _c(
        "u_heel_en",
        "salud",
        "Plantar fasciitis again: the podiatrist wants insoles and no hill running for a month.",
        [
            "I ran the hill repeats on Sunday and felt strong the whole way up, even the last one.",
            "The podiatrist's office moved to the second floor of the clinic on Baker Street.",
            "New insoles for my work shoes made the commute a lot more comfortable this week.",
            "My sister is training for a trail race in the mountains in June; lots of hills.",
        ],
        [
            "What did the foot specialist tell me to do about my heel?",
            "¿Puedo correr cuestas ahora mismo con lo del pie?",
        ],
    ),
    _c(
        "u_bank_fraud",
        "dinero",
        "Dos cargos de 59,99 que no reconozco en la tarjeta: el banco la bloqueó y abrió incidencia.",
        [
            "El banco subió la comisión de mantenimiento a 8 euros al trimestre sin avisar apenas.",
            "Pagué con la tarjeta 59,99 por las zapatillas de deporte de Lucía en la tienda del centro.",
            "Me llegó un SMS falso del banco pidiendo que confirme los datos de acceso; lo borré.",
            "La tarjeta nueva de la cuenta conjunta llega por correo en cinco días laborables.",
        ],
        [
            "¿Qué pasó con los cobros raros de la tarjeta?",
            "¿Por qué no me funciona la tarjeta esta semana?",
        ],
    ),
    _c(
        "u_choir",
        "ocio",
        "En el coro me pasaron de tenor a barítono; el concierto de Navidad es el 19 en San Andrés.",
        [
            "El coro ensaya los martes y los jueves en el salón parroquial, de ocho a diez.",
            "Fuimos al concierto de Navidad del colegio de los niños; Hugo cantó en primera fila.",
            "En la iglesia de San Andrés hay una exposición de belenes hasta el 6 de enero.",
            "Mi tenor favorito canta en el Teatro Real el mes que viene y ya no quedan entradas.",
        ],
        [
            "¿Qué voz canto ahora en la coral y cuándo actuamos?",
            "¿Dónde es la actuación navideña del grupo de canto?",
        ],
    ),
    _c(
        "u_data_migration",
        "trabajo",
        "La migración del almacén de datos a BigQuery se retrasa a marzo por el contrato.",
        [
            "El almacén de la calle Prado se vacía en marzo para hacer obras en el tejado.",
            "BigQuery nos costó 300 euros el mes pasado por una consulta mal hecha de marketing.",
            "El contrato con el proveedor de limpieza de la oficina se renueva en abril.",
            "Migramos el correo de la empresa a otro servidor el fin de semana sin incidencias.",
        ],
        [
            "¿Por qué se ha aplazado el traslado de los datos a la nube?",
            "¿Para cuándo queda el cambio al nuevo data warehouse?",
        ],
    ),
    _c(
        "u_kid_glasses",
        "familia",
        "Hugo tiene 1,5 de miopía: gafas para la pizarra y revisión en seis meses.",
        [
            "Hugo rompió las gafas de sol jugando en el parque; las patillas no tienen arreglo.",
            "La oftalmóloga de mamá se jubila en diciembre y hay que buscar otra por la zona.",
            "Hugo se sienta ahora en la primera fila de la clase porque habla mucho atrás.",
            "Revisión de los seis meses del coche en el taller: todo correcto, nada que cambiar.",
        ],
        [
            "¿Cuánto ve mal de lejos el peque y qué le han mandado?",
            "¿Cuándo vuelven a mirarle la vista a mi hijo?",
        ],
    ),
    _c(
        "u_leeds_lease",
        "trabajo",
        "The Leeds office lease ends in March; the landlord offers two more years at 5% more.",
        [
            "We painted the office in Leeds over the bank holiday weekend; it looks brand new.",
            "My flat's rent went up 3% in January, exactly as the contract said it would.",
            "The landlord replaced the broken boiler in the office kitchen after two weeks.",
            "March is when we plan the team offsite in the Lake District, if the budget allows.",
        ],
        [
            "What renewal terms did we get for the Leeds workspace?",
            "When does our office rental contract run out?",
        ],
    ),
    _c(
        "u_medication_switch",
        "salud",
        "La psiquiatra bajó la sertralina a 50 mg; si vuelve el insomnio, llamar antes de la cita.",
        [
            "Tomo vitamina D los lunes porque salí bajo en la analítica de primavera.",
            "La psiquiatra tiene la consulta nueva en la tercera planta del centro de salud.",
            "A mi hermano le recetaron lo mismo hace un año y dice que a él le fue muy bien.",
            "La farmacia no tenía la marca de siempre de la sertralina y me dieron el genérico.",
        ],
        [
            "¿Qué dosis del antidepresivo tomo ahora?",
            "¿Qué hago si no duermo con el cambio de la medicación?",
        ],
    ),
    _c(
        "u_fridge",
        "hogar",
        "La nevera no enfría abajo; está en garantía y el técnico viene el martes.",
        [
            "Descongelamos el congelador de abajo y tiramos todo lo que estaba caducado.",
            "La garantía del lavavajillas terminó el año pasado, justo antes de que fallara.",
            "El martes por la mañana viene el del gas a leer el contador de la cocina.",
            "Compramos una nevera pequeña para el despacho de casa, para las bebidas.",
        ],
        [
            "¿Cuándo viene alguien a mirar el frigorífico que no funciona?",
            "¿Sigue en garantía el frigo?",
        ],
    ),
    _c(
        "u_volunteering",
        "ocio",
        "Los sábados ayudo en el banco de alimentos; este mes coordino la recogida del súper.",
        [
            "El banco me puso un cajero nuevo justo al lado del súper, muy cómodo para sacar.",
            "Los sábados por la mañana Lucía tiene clase de natación en el polideportivo.",
            "Donamos la ropa de invierno de los niños a la parroquia del barrio el domingo.",
            "Este mes coordino las vacaciones del equipo de soporte, que es un rompecabezas.",
        ],
        [
            "¿Qué voluntariado hago el fin de semana?",
            "¿De qué me encargo este mes en la ONG de comida?",
        ],
    ),
    _c(
        "u_pycon_talk",
        "trabajo",
        "My talk at PyCon Lisbon was accepted: 25 minutes on Thursday about testing pipelines.",
        [
            "I booked the hotel in Lisbon near the river for the family holiday in October.",
            "The testing of the new data pipeline failed on Thursday afternoon, again.",
            "My colleague gave a 25-minute talk about Rust at the local meetup last night.",
            "PyCon tickets are cheaper if you buy them before January, so I should hurry.",
        ],
        [
            "When do I speak at the Python conference, and on what?",
            "¿Me aceptaron la charla del congreso?",
        ],
    ),
    _c(
        "u_sister_baby",
        "familia",
        "Mi hermana Carmen sale de cuentas el 2 de abril; es niña y se llamará Alba.",
        [
            "Alba, la hija de mi vecina, empieza el colegio en septiembre con Lucía.",
            "Carmen y su marido cambiaron el coche por uno más grande, un monovolumen.",
            "El 2 de abril es el aniversario de mis padres; cumplen 41 años casados.",
            "Le regalamos a Carmen una cuna de madera de segunda mano, como nueva.",
        ],
        [
            "¿Para cuándo espera mi hermana al bebé y cómo se llamará?",
            "¿Es niño o niña lo que tiene Carmen?",
        ],
    ),
    _c(
        "u_password_leak",
        "tecnologia",
        "Mi correo salió en una filtración de LinkedIn; cambié la clave y puse llave física.",
        [
            "LinkedIn me recomendó un curso de liderazgo que no me interesa nada de nada.",
            "Cambié la clave del wifi porque el vecino del segundo la tenía apuntada.",
            "El correo del trabajo tiene un filtro de spam nuevo que se pasa de estricto.",
            "Compré una llave física de repuesto para la puerta del trastero de abajo.",
        ],
        [
            "¿Qué hice cuando mi email apareció en una brecha de datos?",
            "¿Por qué tuve que renovar la contraseña del correo?",
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
    # The unseen split draws from its own generator, so the first two splits' memories (their
    # days, whether logged or added, their order) are the ones they were measured on.
    urng = random.Random(seed + 1)
    for case in UNSEEN_CASES:
        target_id = f"{case.key}:target"
        texts = [(target_id, case.target)] + [
            (f"{case.key}:look{i}", t) for i, t in enumerate(case.lookalikes)
        ]
        for mid, text in texts:
            via = "log" if urng.random() < 0.5 else "add"
            memory = EvalMemory(mid, text, case.key, case.theme, via, _day(urng))
            out.memories.insert(urng.randrange(len(out.memories) + 1), memory)
        for q in case.questions:
            out.queries.append(EvalQuery(q, target_id, case.key, "unseen"))
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
