"""Questions nothing answers, for calibrating the context's relevance bound (``Answering``).

Two kinds, asked of the stores the fit reads (the grounded set's and the synthetic set's):

- **unanswerable**: about something no memory mentions (a passport, the family doctor, a
  bakery's hours);
- **traps**: the subject is stored, the detail asked is not ("¿Qué raza es Toby?" where
  Toby's vaccine, food and age are stored in the grounded store). A memory about the subject
  is related but answers nothing. ``TRAPS`` are asked of the grounded store; the
  unanswerable questions whose subject the synthetic store mentions
  (``MENTIONED_IN_SYNTHETIC``: its plumber, its boiler, a PIN changed) are traps there.

Written for the fit, apart from any held-out set; a question of either kind that a careful
reader could answer from a stored memory would be a defect of the set. Their answer is none:
a context for them should hold no memory.
"""

from __future__ import annotations

UNANSWERABLE = (
    "¿Cuál es mi número de pasaporte?",
    "¿Qué número de pie calzo?",
    "¿Cómo se llama el fontanero que vino a casa?",
    "¿Cuál es el PIN de la tarjeta del banco?",
    "¿Qué documentos necesito para viajar a Canadá?",
    "¿En qué colegio estudié de pequeño?",
    "¿Cuál es el número de póliza del seguro de vida?",
    "¿Qué le regalé a mi pareja por nuestro aniversario?",
    "¿A qué hora cierra la oficina de correos?",
    "¿Cuánto pagué por la lavadora?",
    "¿Qué modelo de caldera tenemos?",
    "¿Quién es mi médico de cabecera?",
    "¿Cuántos kilómetros tiene la furgoneta?",
    "¿Qué día pasan a recoger el reciclaje?",
    "¿Cómo se llama el pediatra de los niños?",
    "cuando me toca renovar el carnet de conducir",
    "que talla de ropa usa mi sobrino",
    "¿Cuál es la capital de Australia?",
    "¿Cuántas calorías tiene una manzana?",
    "¿Qué tiempo hará mañana?",
    "¿En qué piso vive el portero?",
    "¿Cuántos puntos me quedan en el carnet?",
    "What is my blood pressure target?",
    "Where did I put the spare car key?",
    "What time does the bakery open on Sundays?",
    "Which dentist did my neighbour recommend?",
    "How much did the new fridge cost?",
    "what's the name of my childhood teacher",
)

TRAPS = (
    "¿Qué raza es Toby?",
    "¿Cuánto pesa la gata Nala?",
    "¿Cuál es el teléfono de la Ferretería Ortiz?",
    "¿Qué IP tiene nas-salon?",
    "¿Cuántos hijos tiene mi prima Nerea?",
    "¿Qué estudió Sergio en la universidad?",
    "¿Cuál es el correo de Patricia?",
    "¿Qué coche tiene Javier?",
    "¿Cuántos años tiene mi abuelo Eusebio?",
    "¿Qué número de habitación teníamos en el hotel de Roma?",
    "¿A qué hora sale el vuelo a Praga?",
    "¿Qué efectos secundarios tiene el omeprazol?",
    "¿Cuál es la contraseña de Spotify?",
    "¿Qué marca es el portátil viejo?",
    "¿Cuántos empleados tiene Bodegas Arana?",
    "¿Dónde trabaja mi cuñado Rubén?",
    "¿Qué estudia mi sobrina Alba?",
    "¿Qué sistema operativo tiene vps-ovh?",
    "¿Quién es el jefe de Tomás?",
    "¿Qué libro me recomendó Elena?",
    "¿A qué se dedica Diego?",
    "¿Cuál es el apellido de Marta?",
    "¿Qué color de pelo tiene el conejo Copo?",
    "¿Cuánto cuesta la consulta del cardióloga?",
    "What school does Grace go to?",
    "What is Emma's favourite food?",
    "Which language does Chloe speak at home?",
    "how tall is Noah",
)

#: The questions of ``UNANSWERABLE`` whose subject the synthetic set's memories mention (none
#: answers them): traps when asked of its store.
MENTIONED_IN_SYNTHETIC = frozenset(
    {
        "¿Cuál es mi número de pasaporte?",
        "¿Cómo se llama el fontanero que vino a casa?",
        "¿Cuál es el PIN de la tarjeta del banco?",
        "¿Qué documentos necesito para viajar a Canadá?",
        "¿En qué colegio estudié de pequeño?",
        "¿Cuál es el número de póliza del seguro de vida?",
        "¿Qué le regalé a mi pareja por nuestro aniversario?",
        "¿Cuánto pagué por la lavadora?",
        "¿Qué modelo de caldera tenemos?",
        "¿Cómo se llama el pediatra de los niños?",
        "que talla de ropa usa mi sobrino",
        "Which dentist did my neighbour recommend?",
        "what's the name of my childhood teacher",
    }
)
