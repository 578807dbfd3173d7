"""Slot vocabularies for the sentence templates: wide on purpose, so that speech models trained
on generated sentences meet many words, names and sounds in context."""

from __future__ import annotations


def _words(text: str) -> tuple[str, ...]:
    """Entries separated by commas or newlines (so multi-word entries read naturally)."""
    return tuple(e.strip() for line in text.strip().splitlines() for e in line.split(",") if e.strip())


FIRST_NAMES = _words("""
James, Mary, Robert, Patricia, John, Jennifer, Michael, Linda, David, Elizabeth, William, Barbara,
Richard, Susan, Joseph, Jessica, Thomas, Sarah, Christopher, Karen, Charles, Lisa, Daniel, Nancy,
Matthew, Betty, Anthony, Margaret, Mark, Sandra, Donald, Ashley, Steven, Kimberly, Paul, Emily,
Andrew, Donna, Joshua, Michelle, Kenneth, Carol, Kevin, Amanda, Brian, Dorothy, George, Melissa,
Timothy, Deborah, Ronald, Stephanie, Edward, Rebecca, Jason, Sharon, Jeffrey, Laura, Ryan, Cynthia,
Jacob, Kathleen, Gary, Amy, Nicholas, Angela, Eric, Shirley, Jonathan, Anna, Stephen, Brenda,
Larry, Pamela, Justin, Emma, Scott, Nicole, Brandon, Helen, Benjamin, Samantha, Samuel, Katherine,
Gregory, Christine, Alexander, Debra, Frank, Rachel, Patrick, Carolyn, Raymond, Janet, Jack,
Catherine, Dennis, Maria, Jerry, Heather, Tyler, Diane, Aaron, Ruth, Jose, Julie, Adam, Olivia,
Nathan, Joyce, Henry, Virginia, Douglas, Victoria, Zachary, Kelly, Peter, Lauren, Kyle, Christina,
Noah, Joan, Ethan, Evelyn, Jeremy, Judith, Walter, Megan, Christian, Andrea, Keith, Cheryl, Roger,
Hannah, Terry, Jacqueline, Austin, Martha, Sean, Gloria, Gerald, Teresa, Carl, Ann, Harold, Sara,
Dylan, Madison, Arthur, Frances, Lawrence, Kathryn, Jordan, Janice, Jesse, Jean, Bryan, Abigail,
Billy, Alice, Bruce, Judy, Gabriel, Sophia, Joe, Grace, Logan, Denise, Alan, Amber, Juan, Doris,
Albert, Marilyn, Willie, Danielle, Elijah, Beverly, Wayne, Isabella, Randy, Theresa, Vincent,
Diana, Mason, Natalie, Roy, Brittany, Ralph, Charlotte, Bobby, Marie, Russell, Kayla, Bradley,
Alexis, Philip, Lori, Eugene, Aisha, Mohammed, Fatima, Omar, Layla, Hiroshi, Yuki, Kenji, Sakura,
Wei, Mei, Jun, Li Na, Raj, Priya, Arjun, Ananya, Vikram, Deepa, Sanjay, Kavya, Carlos, Sofia,
Miguel, Lucia, Diego, Valentina, Mateo, Camila, Santiago, Isabel, Ivan, Olga, Dmitri, Natasha,
Sergei, Katya, Lars, Ingrid, Sven, Astrid, Pierre, Amelie, Jacques, Camille, Hans, Greta, Klaus,
Heidi, Giovanni, Chiara, Marco, Francesca, Kwame, Amara, Chidi, Ngozi, Tunde, Zainab, Kofi, Efua,
Liam, Aoife, Niamh, Siobhan, Declan, Ciaran, Finn, Saoirse, Malik, Imani, Jamal, Keisha, Andre,
Tanisha, Darnell, Latoya, Minh, Linh, Thanh, Huong, Jin, Soo-ah, Min-jun, Ji-woo, Tomasz, Agnieszka,
Piotr, Zofia, Mehmet, Ayse, Emre, Elif, Nikos, Eleni, Dimitra, Yannis, Ahmed, Mariam, Youssef, Nour,
Quentin, Beatrice, Cornelius, Penelope, Everett, Rosalind, Thaddeus, Winifred, Ezekiel, Genevieve,
Bartholomew, Octavia, Leopold, Clementine, Archibald, Marguerite, Desmond, Imogen, Rupert, Tabitha
""")

LAST_NAMES = _words("""
Smith, Johnson, Williams, Brown, Jones, Garcia, Miller, Davis, Rodriguez, Martinez, Hernandez,
Lopez, Gonzalez, Wilson, Anderson, Thomas, Taylor, Moore, Jackson, Martin, Lee, Perez, Thompson,
White, Harris, Sanchez, Clark, Ramirez, Lewis, Robinson, Walker, Young, Allen, King, Wright, Scott,
Torres, Nguyen, Hill, Flores, Green, Adams, Nelson, Baker, Hall, Rivera, Campbell, Mitchell,
Carter, Roberts, Gomez, Phillips, Evans, Turner, Diaz, Parker, Cruz, Edwards, Collins, Reyes,
Stewart, Morris, Morales, Murphy, Cook, Rogers, Gutierrez, Ortiz, Morgan, Cooper, Peterson, Bailey,
Reed, Kelly, Howard, Ramos, Kim, Cox, Ward, Richardson, Watson, Brooks, Chavez, Wood, James,
Bennett, Gray, Mendoza, Ruiz, Hughes, Price, Alvarez, Castillo, Sanders, Patel, Myers, Long, Ross,
Foster, Jimenez, Powell, Jenkins, Perry, Russell, Sullivan, Bell, Coleman, Butler, Henderson,
Barnes, Gonzales, Fisher, Vasquez, Simmons, Romero, Jordan, Patterson, Alexander, Hamilton, Graham,
Reynolds, Griffin, Wallace, Moreno, West, Cole, Hayes, Bryant, Herrera, Gibson, Ellis, Tran,
Medina, Aguilar, Stevens, Murray, Ford, Castro, Marshall, Owens, Harrison, Fernandez, McDonald,
Woods, Washington, Kennedy, Wells, Vargas, Henry, Chen, Freeman, Webb, Tucker, Guzman, Burns,
Crawford, Olson, Simpson, Porter, Hunter, Gordon, Mendez, Silva, Shaw, Snyder, Mason, Dixon,
Munoz, Hunt, Hicks, Holmes, Palmer, Wagner, Black, Robertson, Boyd, Rose, Stone, Salazar, Fox,
Warren, Mills, Meyer, Rice, Schmidt, Garza, Daniels, Ferguson, Nichols, Stephens, Soto, Weaver,
Ryan, Gardner, Payne, Grant, Dunn, Kelley, Spencer, Hawkins, Arnold, Pierce, Vazquez, Hansen,
Peters, Santos, Hart, Bradley, Knight, Elliott, Cunningham, Duncan, Armstrong, Hudson, Carroll,
Lane, Riley, Andrews, Alvarado, Ray, Delgado, Berry, Perkins, Hoffman, Johnston, Matthews, Pena,
Richards, Contreras, Willis, Carpenter, Lawrence, Sandoval, Okafor, Adeyemi, Mensah, Owusu, Nakamura,
Tanaka, Watanabe, Suzuki, Yamamoto, Wang, Zhang, Liu, Huang, Zhao, Sharma, Gupta, Singh, Kumar,
Reddy, Iyer, Kowalski, Nowak, Novak, Horvath, Kovacs, Ivanov, Petrov, Popescu, Rossi, Russo,
Ferrari, Esposito, Bianchi, Muller, Schneider, Fischer, Weber, Becker, Dubois, Lefebvre, Moreau,
Laurent, Fontaine, Larsen, Andersen, Nielsen, Johansson, Lindqvist, Virtanen, Korhonen, O'Brien,
O'Connor, McCarthy, Fitzgerald, Gallagher, Doyle, Byrne, Quinn, Abernathy, Blackwood, Whitfield,
Fairbanks, Thornton, Ashworth, Pemberton, Kingsley, Montgomery, Beaumont, Delacroix, Vanderbilt
""")

CITIES = _words("""
New York, Los Angeles, Chicago, Houston, Phoenix, Philadelphia, San Antonio, San Diego, Dallas,
Austin, Jacksonville, San Jose, Fort Worth, Columbus, Charlotte, Indianapolis, San Francisco,
Seattle, Denver, Nashville, Oklahoma City, El Paso, Boston, Portland, Las Vegas, Detroit, Memphis,
Louisville, Baltimore, Milwaukee, Albuquerque, Tucson, Fresno, Sacramento, Kansas City, Mesa,
Atlanta, Omaha, Colorado Springs, Raleigh, Miami, Minneapolis, Tulsa, Cleveland, Wichita, Arlington,
New Orleans, Tampa, Honolulu, Anaheim, Aurora, Santa Ana, St. Louis, Pittsburgh, Cincinnati,
Anchorage, Orlando, Buffalo, Lincoln, Madison, Boise, Reno, Spokane, Richmond, Des Moines,
Birmingham, Salt Lake City, Little Rock, Savannah, Charleston, Burlington, Providence, Hartford,
Albany, Syracuse, Rochester, Tallahassee, Montgomery, Jackson, Baton Rouge, Shreveport, Duluth,
Fargo, Sioux Falls, Billings, Cheyenne, Santa Fe, Flagstaff, Eugene, Tacoma, Bakersfield, Modesto,
Toronto, Montreal, Vancouver, Calgary, Ottawa, Edmonton, Winnipeg, Halifax, London, Manchester,
Liverpool, Glasgow, Edinburgh, Dublin, Cork, Belfast, Cardiff, Bristol, Leeds, Paris, Lyon,
Marseille, Berlin, Munich, Hamburg, Frankfurt, Vienna, Zurich, Geneva, Amsterdam, Rotterdam,
Brussels, Copenhagen, Stockholm, Oslo, Helsinki, Reykjavik, Madrid, Barcelona, Seville, Lisbon,
Porto, Rome, Milan, Naples, Florence, Venice, Athens, Istanbul, Prague, Warsaw, Krakow, Budapest,
Bucharest, Sofia, Belgrade, Zagreb, Tokyo, Osaka, Kyoto, Seoul, Busan, Beijing, Shanghai,
Hong Kong, Taipei, Singapore, Bangkok, Hanoi, Manila, Jakarta, Kuala Lumpur, Mumbai, Delhi,
Bangalore, Chennai, Kolkata, Karachi, Dubai, Doha, Cairo, Nairobi, Lagos, Accra, Johannesburg,
Cape Town, Casablanca, Sydney, Melbourne, Brisbane, Perth, Adelaide, Auckland, Wellington,
Mexico City, Guadalajara, Monterrey, Bogota, Lima, Santiago, Buenos Aires, Sao Paulo,
Rio de Janeiro, Montevideo, Quito, Havana, San Juan, Kingston, Springfield, Riverside, Fairview,
Greenville, Franklin, Clinton, Georgetown, Oakdale, Maple Grove, Cedar Rapids, Lakewood
""")

STATES = _words("""
Alabama, Alaska, Arizona, Arkansas, California, Colorado, Connecticut, Delaware, Florida, Georgia,
Hawaii, Idaho, Illinois, Indiana, Iowa, Kansas, Kentucky, Louisiana, Maine, Maryland,
Massachusetts, Michigan, Minnesota, Mississippi, Missouri, Montana, Nebraska, Nevada,
New Hampshire, New Jersey, New Mexico, New York, North Carolina, North Dakota, Ohio, Oklahoma,
Oregon, Pennsylvania, Rhode Island, South Carolina, South Dakota, Tennessee, Texas, Utah, Vermont,
Virginia, Washington, West Virginia, Wisconsin, Wyoming
""")

STATE_CODES = _words("AL, AK, AZ, CA, CO, CT, FL, GA, IL, IN, MA, MD, MI, MN, NC, NJ, NY, OH, OR, PA, TX, VA, WA, WI")

COUNTRIES = _words("""
Canada, Mexico, Brazil, Argentina, Chile, Peru, Colombia, the United Kingdom, Ireland, France,
Germany, Spain, Portugal, Italy, Greece, Turkey, Egypt, Kenya, Nigeria, Ghana, South Africa,
Morocco, India, Pakistan, Bangladesh, China, Japan, South Korea, Vietnam, Thailand, Indonesia,
the Philippines, Australia, New Zealand, Norway, Sweden, Finland, Denmark, Iceland, Poland,
Ukraine, Romania, Hungary, Austria, Switzerland, the Netherlands, Belgium, Israel, Jordan, Qatar
""")

STREET_NAMES = _words("""
Maple, Oak, Pine, Cedar, Elm, Birch, Willow, Chestnut, Walnut, Spruce, Magnolia, Sycamore,
Hickory, Dogwood, Juniper, Main, Church, Market, Park, Lake, Hill, River, Spring, Mill, Bridge,
High, Center, Union, Washington, Lincoln, Jefferson, Madison, Franklin, Adams, Jackson, Monroe,
Highland, Sunset, Meadow, Forest, Prospect, Pleasant, Ridge, Valley, Orchard, Harbor, Bay, Ocean,
Beacon, Liberty, Victory, Heritage, Summit, Fairway, Greenwood, Woodland, Riverside, Lakeview,
Cherry, Peachtree, Cypress, Poplar, Aspen, Laurel, Hawthorne, Rosewood, Sherwood, Wellington,
Kensington, Canterbury, Sheffield, Brighton, Lexington, Concord, Princeton, Stanford, Arlington,
First, Second, Third, Fourth, Fifth, Sixth, Seventh, Eighth, Ninth, Tenth, Broad, Front, Water,
Grand, Elmwood, Brookside, Stonebridge, Foxhollow, Quail Run, Deer Creek, Silver Lake, Mockingbird
""")

STREET_TYPES = _words("Street, Avenue, Road, Drive, Lane, Boulevard, Court, Place, Way, Terrace, Circle, Parkway")
STREET_ABBREVIATIONS = _words("St., Ave., Rd., Dr., Ln., Blvd., Ct., Pl.")

COMPANIES = _words("""
Northwind Traders, Bluebird Logistics, Summit Health, Evergreen Bank, Pioneer Insurance,
Lakeside Dental, Horizon Wireless, Redwood Energy, Silverline Airlines, Brightpath Learning,
Oakridge Pharmacy, Harbor Freight Lines, Crestview Realty, Sterling Auto Group, Maplewood Clinic,
Granite Telecom, Riverbend Utilities, Beacon Credit Union, Cobalt Software, Sunrise Bakery,
Atlas Moving, Meridian Hotels, Keystone Plumbing, Falcon Security, Greenleaf Grocers,
Westbrook Veterinary, Quantum Cloud, Cornerstone Legal, Starlight Cinemas, Ironwood Fitness
""")

PRODUCTS = _words("""
laptop, tablet, smartphone, wireless earbuds, smart watch, coffee maker, espresso machine,
blender, toaster oven, air fryer, slow cooker, rice cooker, stand mixer, vacuum cleaner,
robot vacuum, dishwasher, washing machine, dryer, refrigerator, microwave, electric kettle,
space heater, ceiling fan, air purifier, humidifier, dehumidifier, thermostat, doorbell camera,
security camera, router, modem, printer, scanner, monitor, keyboard, mouse, webcam, microphone,
headphones, speaker, soundbar, television, projector, game console, controller, external hard drive,
memory card, phone case, screen protector, charging cable, power bank, backpack, suitcase,
carry-on bag, duffel bag, wallet, sunglasses, running shoes, hiking boots, sandals, winter coat,
rain jacket, wool sweater, cotton shirt, denim jacket, leather belt, yoga mat, dumbbells,
treadmill, exercise bike, tent, sleeping bag, camping stove, flashlight, lantern, cooler,
water bottle, thermos, cookware set, frying pan, cast iron skillet, knife set, cutting board,
dinner plates, wine glasses, bed frame, mattress, pillow, duvet, bath towels, shower curtain,
desk chair, standing desk, bookshelf, sofa, armchair, coffee table, floor lamp, rug, curtains,
picture frame, garden hose, lawn mower, leaf blower, pressure washer, cordless drill, toolbox,
ladder, paint roller, light bulbs, smoke detector, fire extinguisher, car battery, tire set,
windshield wipers, dash cam, bicycle, helmet, skateboard, scooter, stroller, car seat, crib,
board game, jigsaw puzzle, guitar, keyboard piano, violin, drum kit, sewing machine, e-reader,
gift card, subscription box, vitamins, sunscreen, shampoo, toothbrush, electric razor, hair dryer
""")

MEDICATIONS = _words("""
ibuprofen, acetaminophen, aspirin, naproxen, amoxicillin, azithromycin, doxycycline, cephalexin,
ciprofloxacin, metformin, insulin, lisinopril, losartan, amlodipine, metoprolol, atenolol,
hydrochlorothiazide, furosemide, atorvastatin, simvastatin, rosuvastatin, levothyroxine,
omeprazole, pantoprazole, famotidine, sertraline, fluoxetine, escitalopram, citalopram,
bupropion, venlafaxine, duloxetine, trazodone, gabapentin, pregabalin, prednisone,
methylprednisolone, albuterol, montelukast, fluticasone, cetirizine, loratadine, fexofenadine,
diphenhydramine, warfarin, apixaban, clopidogrel, tramadol, hydrocodone, oxycodone, alprazolam,
lorazepam, clonazepam, zolpidem, melatonin, tamsulosin, finasteride, sildenafil, allopurinol,
colchicine, methotrexate, hydroxychloroquine, valacyclovir, acyclovir, oseltamivir, nitrofurantoin,
metronidazole, clindamycin, ondansetron, loperamide, docusate, lamotrigine, levetiracetam,
topiramate, sumatriptan, propranolol, spironolactone, carvedilol, digoxin, potassium chloride,
vitamin D, iron supplements, folic acid, magnesium, fish oil, probiotics, epinephrine
""")

SYMPTOMS = _words("""
a headache, a migraine, a fever, chills, a sore throat, a cough, a dry cough, a runny nose,
congestion, sneezing, shortness of breath, wheezing, chest pain, chest tightness, heart palpitations,
dizziness, lightheadedness, fainting, nausea, vomiting, diarrhea, constipation, stomach cramps,
heartburn, bloating, back pain, lower back pain, neck pain, shoulder pain, knee pain, hip pain,
joint pain, muscle aches, stiffness, swelling in my ankles, a rash, itching, hives, a bruise that
won't heal, numbness in my fingers, tingling in my feet, blurred vision, ringing in my ears,
an earache, a toothache, trouble sleeping, fatigue, low energy, loss of appetite, weight loss,
night sweats, anxiety, a racing heart, frequent urination, a burning sensation, a sprained ankle,
a swollen knee, a cut on my hand, a burn on my arm, sinus pressure, a stiff neck, a pulled muscle,
hay fever, seasonal allergies, a bee sting, pink eye, a nosebleed, hoarseness, hiccups
""")

BODY_PARTS = _words("""
head, neck, shoulder, arm, elbow, wrist, hand, finger, thumb, chest, back, stomach, hip, leg, knee,
ankle, foot, toe, ear, eye, nose, mouth, jaw, throat, spine, ribs, skin, heel, calf, thigh
""")

HEALTH_PROVIDERS = _words("""
primary care doctor, cardiologist, dermatologist, pediatrician, neurologist, orthopedic surgeon,
physical therapist, dentist, orthodontist, optometrist, allergist, gastroenterologist,
endocrinologist, psychiatrist, therapist, nurse practitioner, pharmacist, radiologist,
obstetrician, oncologist, urologist, podiatrist, audiologist, nutritionist, chiropractor
""")

FOODS = _words("""
pizza, pasta, lasagna, spaghetti, ravioli, risotto, sushi, ramen, pho, pad thai, fried rice,
dumplings, spring rolls, curry, biryani, naan, tacos, burritos, enchiladas, quesadillas, nachos,
guacamole, salsa, hamburger, cheeseburger, hot dog, french fries, onion rings, fried chicken,
chicken wings, grilled salmon, fish and chips, shrimp, lobster, crab cakes, steak, pork chops,
meatballs, meatloaf, roast beef, turkey sandwich, club sandwich, grilled cheese, tomato soup,
chicken noodle soup, clam chowder, chili, caesar salad, greek salad, coleslaw, potato salad,
mashed potatoes, baked potato, sweet potato, corn on the cob, green beans, broccoli, spinach,
asparagus, brussels sprouts, carrots, mushrooms, zucchini, eggplant, avocado toast, pancakes,
waffles, french toast, scrambled eggs, omelet, bacon, sausage, oatmeal, granola, yogurt, bagel,
croissant, muffin, cinnamon roll, doughnut, apple pie, cheesecake, chocolate cake, brownies,
cookies, ice cream, frozen yogurt, fruit salad, strawberries, blueberries, raspberries, bananas,
apples, oranges, grapes, watermelon, pineapple, mango, peaches, cherries, lemonade, iced tea,
orange juice, hot chocolate, cappuccino, latte, espresso, green tea, sparkling water, smoothie,
milkshake, falafel, hummus, kebab, gyro, paella, tapas, pierogi, goulash, schnitzel, bratwurst,
poutine, jambalaya, gumbo, cornbread, biscuits and gravy, mac and cheese, quiche, ratatouille
""")

ANIMALS = _words("""
dog, cat, puppy, kitten, horse, pony, cow, pig, sheep, goat, chicken, duck, goose, turkey, rabbit,
hamster, guinea pig, parrot, canary, goldfish, turtle, lizard, snake, frog, toad, owl, eagle, hawk,
falcon, crow, raven, sparrow, robin, pigeon, seagull, pelican, penguin, flamingo, swan, heron,
deer, moose, elk, bear, wolf, fox, coyote, raccoon, squirrel, chipmunk, beaver, otter, skunk,
porcupine, badger, hedgehog, bat, mouse, rat, lion, tiger, leopard, cheetah, jaguar, elephant,
giraffe, zebra, rhinoceros, hippopotamus, gorilla, chimpanzee, monkey, kangaroo, koala, panda,
camel, llama, alpaca, whale, dolphin, shark, octopus, jellyfish, seal, walrus, crab, lobster,
butterfly, bee, wasp, ant, spider, ladybug, dragonfly, grasshopper, firefly, snail, worm
""")

JOBS = _words("""
teacher, nurse, doctor, engineer, accountant, lawyer, electrician, plumber, carpenter, mechanic,
chef, baker, waiter, bartender, cashier, pharmacist, dentist, architect, designer, photographer,
journalist, librarian, scientist, researcher, programmer, data analyst, project manager,
receptionist, firefighter, police officer, paramedic, pilot, flight attendant, bus driver,
truck driver, farmer, gardener, landscaper, painter, musician, singer, actor, writer, editor,
translator, interpreter, social worker, counselor, veterinarian, real estate agent, banker,
economist, professor, student, intern, consultant, sales representative, customer service agent,
warehouse worker, delivery driver, construction worker, welder, tailor, hairdresser, barber,
personal trainer, coach, athlete, dancer, judge, surgeon, dietitian, optician, locksmith
""")

COLORS = _words("""
red, blue, green, yellow, orange, purple, pink, brown, black, white, gray, silver, gold, navy blue,
teal, turquoise, maroon, beige, ivory, olive green, lavender, crimson, charcoal, burgundy, coral
""")

ADJECTIVES = _words("""
quick, slow, quiet, loud, bright, dark, warm, cold, soft, hard, smooth, rough, heavy, light, tiny,
huge, narrow, wide, tall, short, ancient, modern, fresh, stale, clean, dirty, cheap, expensive,
simple, complicated, strange, familiar, gentle, fierce, careful, careless, clever, curious,
friendly, grumpy, cheerful, nervous, calm, busy, lazy, brave, shy, polite, rude, honest, generous,
stubborn, patient, eager, anxious, proud, humble, delicate, sturdy, fragile, reliable, sleek,
shiny, dusty, crowded, empty, cozy, spacious, noisy, peaceful, gorgeous, ugly, delicious, bitter,
sweet, sour, salty, spicy, crunchy, creamy, juicy, tender, crisp, sticky, fluffy, slippery,
enormous, miniature, vivid, pale, rusty, wooden, golden, silky, fuzzy, glossy, ordinary, unusual,
peculiar, magnificent, ridiculous, wonderful, terrible, awkward, elegant, graceful, clumsy
""")

PLACES = _words("""
the park, the library, the grocery store, the post office, the bank, the pharmacy, the hospital,
the airport, the train station, the bus stop, the museum, the stadium, the beach, the mall,
the office, the gym, the hardware store, the bakery, the coffee shop, the farmers market,
the dentist's office, the city hall, the courthouse, the zoo, the aquarium, the campground,
the community center, the swimming pool, the movie theater, the concert hall, the garage,
the laundromat, the warehouse, the school, the university, the clinic, the hotel, the harbor
""")

ACTIVITIES = _words("""
go hiking, go swimming, play tennis, play basketball, watch a movie, read a book, bake bread,
plant tomatoes, paint the fence, clean the garage, fix the sink, walk the dog, visit my parents,
learn the piano, practice yoga, ride a bike, go fishing, go camping, cook dinner, wash the car,
mow the lawn, write a letter, study for the exam, call my sister, pay the bills, do the laundry,
go grocery shopping, take a nap, go for a run, build a birdhouse, repaint the kitchen,
organize the closet, visit the museum, try the new restaurant, see a concert, learn Spanish,
take photographs, knit a scarf, volunteer at the shelter, go skiing, go bowling, play chess
""")

WEEKDAYS = _words("Monday, Tuesday, Wednesday, Thursday, Friday, Saturday, Sunday")
MONTHS = _words("January, February, March, April, May, June, July, August, September, October, November, December")

GAME_ITEMS = _words("""
sword, longsword, dagger, battle axe, war hammer, spear, bow, crossbow, staff, wand, shield,
helmet, chest plate, gauntlets, boots of speed, cloak of shadows, ring of protection, amulet,
health potion, mana potion, elixir, scroll of fire, spell book, treasure chest, golden key,
silver key, skeleton key, map fragment, compass, lantern, rope, grappling hook, torch, pickaxe,
fishing rod, enchanted gem, ruby, sapphire, emerald, diamond, crystal shard, dragon scale,
phoenix feather, wolf pelt, iron ore, gold ore, mithril, leather armor, chain mail, plate armor,
magic carpet, flying mount, war horse, repair kit, medkit, ammo crate, sniper rifle, shotgun,
plasma rifle, laser pistol, grenade, smoke bomb, jetpack, energy shield, hover bike, blueprint,
crafting table, furnace, anvil, fishing net, seed pouch, watering can, lockpick, disguise kit
""")

GAME_PLACES = _words("""
the dungeon, the castle, the dark forest, the crystal caves, the abandoned mine, the haunted manor,
the village, the tavern, the blacksmith, the market square, the harbor, the desert temple,
the frozen peaks, the swamp, the ruins, the tower, the throne room, the arena, the space station,
the cargo bay, the bridge, the engine room, the safe house, the rooftop, the sewers, the lab
""")

GAME_CREATURES = _words("""
goblin, orc, troll, ogre, dragon, skeleton, zombie, ghost, wraith, vampire, werewolf, giant spider,
slime, golem, witch, necromancer, bandit, pirate, knight, wizard, ranger, assassin, alien drone,
robot sentry, mutant, boss, mini boss, elite guard, sea serpent, griffin, hydra, basilisk
""")

PROFESSIONAL_TITLES = _words("Dr., Mr., Mrs., Ms., Prof.")

ASSISTANT_THINGS = _words("""
the lights, the living room lights, the bedroom lamp, the thermostat, the heating, the air
conditioning, the music, the radio, the podcast, the timer, the alarm, the oven, the coffee maker,
the sprinklers, the front door camera, the garage door, the dishwasher, the fan, the television
""")

TOPICS = _words("""
the weather, the news, the traffic, the stock market, the game last night, the election, the new
policy, the budget, the schedule, the merger, the quarterly report, the launch, the renovation,
the wedding, the trip, the recipe, the contract, the lease, the invoice, the refund, the shipment
""")

ACRONYMS_SPELLED = _words(
    "FBI, CIA, IRS, USA, UK, EU, CEO, CFO, HR, IT, ATM, DVD, PDF, USB, GPS, ID, TV, PC, HVAC, BBC, NFL, NBA"
)
ACRONYMS_SAID = _words("NASA, NATO, UNESCO, FEMA, OSHA, AIDS, laser, radar, scuba, PIN, GIF, SIM, FAQ")
