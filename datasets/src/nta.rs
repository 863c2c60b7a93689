//! The static geography of the taxi data set: NYC neighbourhoods (NTAs) with
//! their borough and PUMA, and synthetic census tracts inside each one.
//!
//! The geography is fixed (it does not depend on the generation seed), so
//! the same neighbourhood always has the same code, tracts and centre.

use std::sync::OnceLock;

use crate::out::{hash, unit};

/// Borough names by borough code (1 = Manhattan … 5 = Staten Island).
pub(crate) const BOROUGHS: [&str; 6] = [
    "",
    "Manhattan",
    "Bronx",
    "Brooklyn",
    "Queens",
    "Staten Island",
];

/// NTA codes ranked by yellow-cab pickups (Manhattan first); the remaining
/// NTAs follow in [`NTAS`] order.
const YELLOW_TOP: [&str; 26] = [
    "MN17", "MN13", "MN40", "MN19", "MN12", "MN20", "MN15", "MN23", "MN24", "MN31", "MN21", "MN22",
    "QN98", "MN25", "MN14", "MN32", "MN27", "MN28", "MN50", "BK73", "MN09", "MN33", "QN68", "BK38",
    "MN11", "MN99",
];

/// NYC 2010 Neighborhood Tabulation Areas: (code, name, borough code, PUMA,
/// centre latitude, centre longitude), most frequent first in the 2013 green
/// taxi sample (centres are the sample's median coordinates; the last twelve,
/// absent from the sample, have hand-placed approximate centres).
pub(crate) const NTAS: [(&str, &str, u8, u16, f64, f64); 195] = [
    ("QN17", "Forest Hills", 4, 4108, 40.7213, -73.8442),
    (
        "QN68",
        "Queensbridge-Ravenswood-Long Island City",
        4,
        4101,
        40.7582,
        -73.9375,
    ),
    (
        "QN99",
        "park-cemetery-etc-Queens",
        4,
        4107,
        40.7546,
        -73.8462,
    ),
    ("QN70", "Astoria", 4, 4101, 40.7611, -73.9202),
    (
        "QN31",
        "Hunters Point-Sunnyside-West Maspeth",
        4,
        4109,
        40.7447,
        -73.9401,
    ),
    ("MN34", "East Harlem North", 1, 3804, 40.8036, -73.9389),
    (
        "MN36",
        "Washington Heights South",
        1,
        3801,
        40.8407,
        -73.9403,
    ),
    ("MN09", "Morningside Heights", 1, 3802, 40.8073, -73.9618),
    ("QN72", "Steinway", 4, 4101, 40.7752, -73.9115),
    ("BK73", "North Side-South Side", 3, 4001, 40.7160, -73.9579),
    ("QN60", "Kew Gardens", 4, 4111, 40.7137, -73.8299),
    ("MN33", "East Harlem South", 1, 3804, 40.7894, -73.9490),
    ("MN11", "Central Harlem South", 1, 3803, 40.8069, -73.9504),
    ("QN98", "Airport", 4, 4102, 40.7698, -73.8649),
    ("MN04", "Hamilton Heights", 1, 3802, 40.8265, -73.9494),
    ("QN28", "Jackson Heights", 4, 4102, 40.7508, -73.8859),
    (
        "BK38",
        "DUMBO-Vinegar Hill-Downtown Brooklyn-Boerum Hill",
        3,
        4004,
        40.6929,
        -73.9874,
    ),
    ("QN63", "Woodside", 4, 4109, 40.7461, -73.9033),
    ("MN17", "Midtown-Midtown South", 1, 3807, 40.7572, -73.9840),
    ("QN29", "Elmhurst", 4, 4107, 40.7429, -73.8781),
    (
        "MN03",
        "Central Harlem North-Polo Grounds",
        1,
        3803,
        40.8161,
        -73.9414,
    ),
    (
        "MN35",
        "Washington Heights North",
        1,
        3801,
        40.8552,
        -73.9316,
    ),
    ("MN12", "Upper West Side", 1, 3806, 40.7895, -73.9731),
    ("MN06", "Manhattanville", 1, 3802, 40.8196, -73.9548),
    ("QN71", "Old Astoria", 4, 4101, 40.7684, -73.9249),
    ("BK37", "Park Slope-Gowanus", 3, 4005, 40.6735, -73.9808),
    ("MN01", "Marble Hill-Inwood", 1, 3801, 40.8673, -73.9193),
    ("BK76", "Greenpoint", 3, 4001, 40.7268, -73.9514),
    (
        "MN40",
        "Upper East Side-Carnegie Hill",
        1,
        3805,
        40.7753,
        -73.9605,
    ),
    ("BK90", "East Williamsburg", 3, 4001, 40.7142, -73.9487),
    ("QN18", "Rego Park", 4, 4108, 40.7304, -73.8628),
    (
        "MN19",
        "Turtle Bay-East Midtown",
        1,
        3808,
        40.7556,
        -73.9715,
    ),
    (
        "BK33",
        "Carroll Gardens-Columbia Street-Red Hook",
        3,
        4005,
        40.6817,
        -73.9963,
    ),
    (
        "MN13",
        "Hudson Yards-Chelsea-Flatiron-Union Square",
        1,
        3807,
        40.7447,
        -73.9973,
    ),
    ("QN22", "Flushing", 4, 4103, 40.7595, -73.8305),
    (
        "MN31",
        "Lenox Hill-Roosevelt Island",
        1,
        3805,
        40.7657,
        -73.9558,
    ),
    (
        "BK09",
        "Brooklyn Heights-Cobble Hill",
        3,
        4004,
        40.6933,
        -73.9923,
    ),
    (
        "BX36",
        "University Heights-Morris Heights",
        2,
        3707,
        40.8506,
        -73.9170,
    ),
    ("MN32", "Yorkville", 1, 3805, 40.7781, -73.9501),
    ("BX46", "Parkchester", 2, 3709, 40.8374, -73.8607),
    ("QN50", "Elmhurst-Maspeth", 4, 4109, 40.7393, -73.8903),
    ("QN27", "East Elmhurst", 4, 4102, 40.7662, -73.8675),
    ("BK68", "Fort Greene", 3, 4004, 40.6897, -73.9763),
    ("QN25", "Corona", 4, 4107, 40.7422, -73.8560),
    (
        "QN35",
        "Briarwood-Jamaica Hills",
        4,
        4106,
        40.7116,
        -73.8152,
    ),
    ("BX63", "West Concourse", 2, 3708, 40.8278, -73.9261),
    ("MN15", "Clinton", 1, 3807, 40.7635, -73.9910),
    (
        "QN38",
        "Pomonok-Flushing Heights-Hillcrest",
        4,
        4106,
        40.7276,
        -73.8049,
    ),
    ("MN23", "West Village", 1, 3810, 40.7336, -74.0012),
    ("QN55", "South Ozone Park", 4, 4113, 40.6755, -73.8238),
    ("QN37", "Kew Gardens Hills", 4, 4106, 40.7253, -73.8187),
    (
        "BX37",
        "Van Nest-Morris Park-Westchester Square",
        2,
        3704,
        40.8450,
        -73.8514,
    ),
    ("QN54", "Richmond Hill", 4, 4111, 40.6971, -73.8306),
    ("QN26", "North Corona", 4, 4102, 40.7523, -73.8626),
    ("MN14", "Lincoln Square", 1, 3806, 40.7747, -73.9824),
    ("BK75", "Bedford", 3, 4003, 40.6879, -73.9499),
    ("BK69", "Clinton Hill", 3, 4004, 40.6894, -73.9648),
    ("BK78", "Bushwick South", 3, 4002, 40.6999, -73.9337),
    ("MN20", "Murray Hill-Kips Bay", 1, 3808, 40.7476, -73.9787),
    ("BX41", "Mount Hope", 2, 3707, 40.8487, -73.9048),
    (
        "MN99",
        "park-cemetery-etc-Manhattan",
        1,
        3806,
        40.7919,
        -73.9535,
    ),
    (
        "MN24",
        "SoHo-TriBeCa-Civic Center-Little Italy",
        1,
        3810,
        40.7198,
        -74.0049,
    ),
    ("BX39", "Mott Haven-Port Morris", 2, 3710, 40.8096, -73.9191),
    ("MN22", "East Village", 1, 3809, 40.7272, -73.9859),
    ("BK61", "Crown Heights North", 3, 4006, 40.6749, -73.9487),
    (
        "BX14",
        "East Concourse-Concourse Village",
        2,
        3708,
        40.8332,
        -73.9151,
    ),
    (
        "BX29",
        "Spuyten Duyvil-Kingsbridge",
        2,
        3701,
        40.8826,
        -73.9069,
    ),
    (
        "BX05",
        "Bedford Park-Fordham North",
        2,
        3706,
        40.8625,
        -73.8934,
    ),
    ("QN53", "Woodhaven", 4, 4111, 40.6925, -73.8546),
    ("BX43", "Norwood", 2, 3706, 40.8799, -73.8793),
    ("BX30", "Kingsbridge Heights", 2, 3706, 40.8635, -73.9046),
    (
        "MN25",
        "Battery Park City-Lower Manhattan",
        1,
        3810,
        40.7077,
        -74.0119,
    ),
    (
        "BX09",
        "Soundview-Castle Hill-Clason Point-Harding Park",
        2,
        3709,
        40.8206,
        -73.8590,
    ),
    ("MN27", "Chinatown", 1, 3809, 40.7195, -73.9903),
    ("BX28", "Van Cortlandt Village", 2, 3701, 40.8712, -73.8972),
    ("BK77", "Bushwick North", 3, 4002, 40.7037, -73.9222),
    ("BX17", "East Tremont", 2, 3705, 40.8427, -73.8861),
    ("MN28", "Lower East Side", 1, 3809, 40.7216, -73.9803),
    ("BX59", "Westchester-Unionport", 2, 3709, 40.8339, -73.8503),
    ("BX06", "Belmont", 2, 3705, 40.8575, -73.8870),
    ("BX08", "West Farms-Bronx River", 2, 3709, 40.8342, -73.8694),
    ("QN61", "Jamaica", 4, 4112, 40.7040, -73.8032),
    ("BX55", "Soundview-Bruckner", 2, 3709, 40.8289, -73.8645),
    ("BX01", "Claremont-Bathgate", 2, 3705, 40.8468, -73.8963),
    ("QN30", "Maspeth", 4, 4110, 40.7263, -73.9025),
    ("BX26", "Highbridge", 2, 3708, 40.8409, -73.9232),
    ("QN19", "Glendale", 4, 4110, 40.7044, -73.8684),
    (
        "SI22",
        "West New Brighton-New Brighton-St. George",
        5,
        3903,
        40.6386,
        -74.0780,
    ),
    ("QN21", "Middle Village", 4, 4110, 40.7185, -73.8736),
    ("BK35", "Stuyvesant Heights", 3, 4003, 40.6898, -73.9354),
    ("BX49", "Pelham Parkway", 2, 3704, 40.8554, -73.8531),
    (
        "BX99",
        "park-cemetery-etc-Bronx",
        2,
        3705,
        40.8540,
        -73.8736,
    ),
    ("BX35", "Morrisania-Melrose", 2, 3705, 40.8276, -73.9042),
    ("QN20", "Ridgewood", 4, 4110, 40.7055, -73.9042),
    (
        "BX34",
        "Melrose South-Mott Haven North",
        2,
        3710,
        40.8174,
        -73.9188,
    ),
    ("MN21", "Gramercy", 1, 3808, 40.7364, -73.9843),
    ("QN62", "Queensboro Hill", 4, 4103, 40.7447, -73.8257),
    ("BK64", "Prospect Heights", 3, 4006, 40.6783, -73.9684),
    ("BK42", "Flatbush", 3, 4015, 40.6455, -73.9610),
    (
        "QN06",
        "Jamaica Estates-Holliswood",
        4,
        4106,
        40.7192,
        -73.7786,
    ),
    ("BK32", "Sunset Park West", 3, 4012, 40.6546, -74.0066),
    ("BX40", "Fordham South", 2, 3707, 40.8590, -73.8991),
    (
        "BX44",
        "Williamsbridge-Olinville",
        2,
        3702,
        40.8852,
        -73.8575,
    ),
    (
        "BX52",
        "Schuylerville-Throgs Neck-Edgewater Park",
        2,
        3703,
        40.8289,
        -73.8244,
    ),
    ("BX27", "Hunts Point", 2, 3710, 40.8219, -73.8918),
    ("QN23", "College Point", 4, 4103, 40.7716, -73.8424),
    (
        "BX22",
        "North Riverdale-Fieldston-Riverdale",
        2,
        3701,
        40.9018,
        -73.9085,
    ),
    ("QN46", "Bayside-Bayside Hills", 4, 4104, 40.7627, -73.7712),
    ("BX62", "Woodlawn-Wakefield", 2, 3702, 40.8958, -73.8472),
    (
        "BK60",
        "Prospect Lefferts Gardens-Wingate",
        3,
        4011,
        40.6587,
        -73.9597,
    ),
    ("BX75", "Crotona Park East", 2, 3705, 40.8341, -73.8882),
    (
        "MN50",
        "Stuyvesant Town-Cooper Village",
        1,
        3808,
        40.7312,
        -73.9768,
    ),
    ("BK63", "Crown Heights South", 3, 4011, 40.6646, -73.9568),
    ("QN51", "Murray Hill", 4, 4103, 40.7652, -73.8179),
    (
        "BX31",
        "Allerton-Pelham Gardens",
        2,
        3704,
        40.8661,
        -73.8453,
    ),
    ("BK31", "Bay Ridge", 3, 4013, 40.6319, -74.0279),
    ("BX33", "Longwood", 2, 3710, 40.8211, -73.8971),
    (
        "QN44",
        "Glen Oaks-Floral Park-New Hyde Park",
        4,
        4105,
        40.7501,
        -73.7080,
    ),
    ("QN01", "South Jamaica", 4, 4112, 40.6908, -73.8029),
    ("SI37", "Stapleton-Rosebank", 5, 3903, 40.6295, -74.0757),
    (
        "BK99",
        "park-cemetery-etc-Brooklyn",
        3,
        4004,
        40.6848,
        -73.9706,
    ),
    ("BK82", "East New York", 3, 4008, 40.6693, -73.8780),
    ("QN49", "Whitestone", 4, 4103, 40.7859, -73.8317),
    ("BX07", "Bronxdale", 2, 3704, 40.8643, -73.8671),
    ("QN52", "East Flushing", 4, 4103, 40.7550, -73.8160),
    ("QN33", "Cambria Heights", 4, 4105, 40.6928, -73.7343),
    ("QN76", "Baisley Park", 4, 4112, 40.6787, -73.7946),
    (
        "QN47",
        "Ft. Totten-Bay Terrace-Clearview",
        4,
        4103,
        40.7807,
        -73.7938,
    ),
    (
        "BX03",
        "Eastchester-Edenwald-Baychester",
        2,
        3702,
        40.8825,
        -73.8475,
    ),
    ("QN56", "Ozone Park", 4, 4113, 40.6779, -73.8442),
    ("QN41", "Fresh Meadows-Utopia", 4, 4106, 40.7344, -73.7849),
    (
        "QN02",
        "Springfield Gardens North",
        4,
        4112,
        40.6700,
        -73.7747,
    ),
    ("BX13", "Co-op City", 2, 3703, 40.8680, -73.8263),
    ("BK40", "Windsor Terrace", 3, 4012, 40.6574, -73.9795),
    ("BK72", "Williamsburg", 3, 4001, 40.7062, -73.9591),
    ("BK34", "Sunset Park East", 3, 4012, 40.6463, -74.0048),
    ("QN42", "Oakland Gardens", 4, 4104, 40.7489, -73.7570),
    (
        "QN03",
        "Springfield Gardens South-Brookville",
        4,
        4105,
        40.6618,
        -73.7721,
    ),
    ("QN05", "Rosedale", 4, 4105, 40.6622, -73.7387),
    (
        "BK17",
        "Sheepshead Bay-Gerritsen Beach-Manhattan Beach",
        3,
        4016,
        40.5911,
        -73.9424,
    ),
    ("BK79", "Ocean Hill", 3, 4007, 40.6774, -73.9111),
    ("QN07", "Hollis", 4, 4112, 40.7135, -73.7578),
    ("QN34", "Queens Village", 4, 4105, 40.7150, -73.7492),
    (
        "BX10",
        "Pelham Bay-Country Club-City Island",
        2,
        3703,
        40.8470,
        -73.8318,
    ),
    ("BK91", "East Flatbush-Farragut", 3, 4010, 40.6511, -73.9442),
    ("BK25", "Homecrest", 3, 4016, 40.6044, -73.9618),
    (
        "SI12",
        "Mariner's Harbor-Arlington-Port Ivory-Graniteville",
        5,
        3903,
        40.6240,
        -74.1487,
    ),
    (
        "BK41",
        "Kensington-Ocean Parkway",
        3,
        4014,
        40.6427,
        -73.9735,
    ),
    ("BK30", "Dyker Heights", 3, 4013, 40.6291, -74.0143),
    ("QN43", "Bellerose", 4, 4105, 40.7325, -73.7209),
    (
        "SI24",
        "Todt Hill-Emerson Hill-Heartland Village-Lighthouse Hill",
        5,
        3902,
        40.5919,
        -74.1616,
    ),
    (
        "QN57",
        "Lindenwood-Howard Beach",
        4,
        4113,
        40.6626,
        -73.8463,
    ),
    ("BK96", "Rugby-Remsen Village", 3, 4010, 40.6600, -73.9195),
    ("QN08", "St. Albans", 4, 4112, 40.6923, -73.7636),
    ("BK81", "Brownsville", 3, 4007, 40.6632, -73.9091),
    ("BK88", "Borough Park", 3, 4014, 40.6343, -73.9908),
    (
        "SI35",
        "New Brighton-Silver Lake",
        5,
        3903,
        40.6333,
        -74.0913,
    ),
    ("SI28", "Port Richmond", 5, 3903, 40.6399, -74.1333),
    (
        "SI05",
        "New Springville-Bloomfield-Travis",
        5,
        3902,
        40.6084,
        -74.1586,
    ),
    (
        "BK85",
        "East New York (Pennsylvania Ave)",
        3,
        4007,
        40.6672,
        -73.8965,
    ),
    (
        "QN10",
        "Breezy Point-Belle Harbor-Rockaway Park-Broad Channel",
        4,
        4114,
        40.5931,
        -73.8191,
    ),
    (
        "BK83",
        "Cypress Hills-City Line",
        3,
        4008,
        40.6785,
        -73.8930,
    ),
    ("BK95", "Erasmus", 3, 4010, 40.6454, -73.9571),
    ("QN48", "Auburndale", 4, 4104, 40.7457, -73.7870),
    ("BK58", "Flatlands", 3, 4009, 40.6319, -73.9320),
    (
        "SI36",
        "Old Town-Dongan Hills-South Beach",
        5,
        3902,
        40.5941,
        -74.0705,
    ),
    ("SI07", "Westerleigh", 5, 3903, 40.6267, -74.1371),
    (
        "SI08",
        "Grymes Hill-Clifton-Fox Hills",
        5,
        3903,
        40.6173,
        -74.0766,
    ),
    ("BK21", "Seagate-Coney Island", 3, 4018, 40.5755, -73.9816),
    ("BK43", "Midwood", 3, 4015, 40.6255, -73.9652),
    ("BK46", "Ocean Parkway South", 3, 4014, 40.6166, -73.9729),
    ("BK28", "Bensonhurst West", 3, 4017, 40.6193, -73.9952),
    ("QN15", "Far Rockaway-Bayswater", 4, 4114, 40.6057, -73.7553),
    ("BK26", "Gravesend", 3, 4018, 40.5876, -73.9687),
    ("QN66", "Laurelton", 4, 4105, 40.6755, -73.7386),
    (
        "SI14",
        "Grasmere-Arrochar-Ft. Wadsworth",
        5,
        3902,
        40.6033,
        -74.0546,
    ),
    ("BK29", "Bensonhurst East", 3, 4017, 40.6050, -73.9781),
    ("SI45", "New Dorp-Midland Beach", 5, 3902, 40.5656, -74.1112),
    (
        "QN45",
        "Douglas Manor-Douglaston-Little Neck",
        4,
        4104,
        40.7689,
        -73.7491,
    ),
    ("BK23", "West Brighton", 3, 4018, 40.5819, -73.9705),
    ("BK50", "Canarsie", 3, 4009, 40.6373, -73.8950),
    (
        "BK45",
        "Georgetown-Marine Park-Bergen Beach-Mill Basin",
        3,
        4009,
        40.6101,
        -73.9223,
    ),
    ("BK44", "Madison", 3, 4016, 40.5999, -73.9515),
    ("BK19", "Brighton Beach", 3, 4018, 40.5780, -73.9600),
    ("BK27", "Bath Beach", 3, 4017, 40.6010, -74.0050),
    ("BK93", "Starrett City", 3, 4008, 40.6480, -73.8820),
    (
        "QN12",
        "Hammels-Arverne-Edgemere",
        4,
        4114,
        40.5930,
        -73.7950,
    ),
    ("BX98", "Rikers Island", 2, 3710, 40.7930, -73.8850),
    (
        "SI01",
        "Annadale-Huguenot-Prince's Bay-Eltingville",
        5,
        3901,
        40.5400,
        -74.1800,
    ),
    (
        "SI11",
        "Charleston-Richmond Valley-Tottenville",
        5,
        3901,
        40.5200,
        -74.2300,
    ),
    ("SI25", "Oakwood-Oakwood Beach", 5, 3902, 40.5600, -74.1150),
    ("SI32", "Rossville-Woodrow", 5, 3901, 40.5450, -74.2100),
    ("SI48", "Arden Heights", 5, 3901, 40.5550, -74.1850),
    ("SI54", "Great Kills", 5, 3901, 40.5500, -74.1500),
    (
        "SI99",
        "park-cemetery-etc-Staten Island",
        5,
        3902,
        40.5900,
        -74.1400,
    ),
];

/// One synthetic census tract.
pub(crate) struct Tract {
    /// `nyct2010_gid`: unique over all tracts, 1-based.
    pub(crate) gid: u32,
    /// `ctlabel`, e.g. `711` or `383.02`.
    pub(crate) ctlabel: String,
    /// `ct2010`: six digits starting with a zero, e.g. `038302` (a string
    /// column, as in the real data).
    pub(crate) ct2010: String,
    /// `boroct2010`: borough code followed by the six `ct2010` digits.
    pub(crate) boroct2010: u32,
    /// `cdeligibil`: `E` or `I`.
    pub(crate) cdeligibil: &'static str,
    /// Tract centre in micro-degrees.
    pub(crate) lat: i64,
    pub(crate) lon: i64,
}

/// One neighbourhood with its tracts.
pub(crate) struct Nta {
    pub(crate) code: &'static str,
    pub(crate) name: &'static str,
    pub(crate) borocode: u8,
    pub(crate) boroname: &'static str,
    pub(crate) puma: u16,
    pub(crate) tracts: Vec<Tract>,
}

/// All neighbourhoods plus the two popularity rankings.
pub(crate) struct Geography {
    pub(crate) ntas: Vec<Nta>,
    /// NTA indices, most popular first, for yellow and green cabs.
    pub(crate) yellow_rank: Vec<usize>,
    pub(crate) green_rank: Vec<usize>,
    /// Index of the `Airport` NTA (JFK and LaGuardia).
    pub(crate) airport: usize,
}

/// The geography, built once on first use.
pub(crate) fn geography() -> &'static Geography {
    static GEO: OnceLock<Geography> = OnceLock::new();
    GEO.get_or_init(build)
}

fn build() -> Geography {
    const KEY: u64 = 0x6E79_6374_3230_3130; // fixed: the geography ignores the seed
    let mut ntas: Vec<Nta> = NTAS
        .iter()
        .map(|&(code, name, borocode, puma, _, _)| Nta {
            code,
            name,
            borocode,
            boroname: BOROUGHS[borocode as usize],
            puma,
            tracts: Vec::new(),
        })
        .collect();
    // Tract numbers ascend within each borough, so (borough, tract) is unique;
    // they stay below 1000, so every `ct2010` starts with a zero and a loader
    // cannot take the column for integers.
    let mut next_ct = [0u32; 6];
    let mut count = 0usize;
    for (i, nta) in ntas.iter_mut().enumerate() {
        let (_, _, boro, _, lat, lon) = NTAS[i];
        let k = 3 + hash(&[KEY, i as u64]) % 10;
        for t in 0..k {
            let h = hash(&[KEY, i as u64, t]);
            next_ct[boro as usize] += 1 + (h % 2) as u32;
            let base = next_ct[boro as usize];
            let split = (h >> 8).is_multiple_of(4);
            let suffix = if split { 1 + (h >> 12) % 2 } else { 0 } as u32;
            let ct6 = base * 100 + suffix;
            let ctlabel = if split {
                format!("{base}.{suffix:02}")
            } else {
                base.to_string()
            };
            let dlat = (unit(mix(h, 1)) - 0.5) * 0.012;
            let dlon = (unit(mix(h, 2)) - 0.5) * 0.015;
            nta.tracts.push(Tract {
                gid: 0,
                ctlabel,
                ct2010: format!("{ct6:06}"),
                boroct2010: boro as u32 * 1_000_000 + ct6,
                cdeligibil: if (h >> 16).is_multiple_of(2) {
                    "E"
                } else {
                    "I"
                },
                lat: ((lat + dlat) * 1e6).round() as i64,
                lon: ((lon + dlon) * 1e6).round() as i64,
            });
            count += 1;
        }
    }
    // gids: a fixed pseudo-random permutation of 1..=count.
    let mut order: Vec<(u64, usize, usize)> = ntas
        .iter()
        .enumerate()
        .flat_map(|(i, n)| {
            (0..n.tracts.len()).map(move |t| (hash(&[KEY, 7, i as u64, t as u64]), i, t))
        })
        .collect();
    order.sort_unstable();
    for (gid, &(_, i, t)) in order.iter().enumerate() {
        ntas[i].tracts[t].gid = gid as u32 + 1;
    }
    debug_assert_eq!(order.len(), count);

    let index_of = |code: &str| {
        ntas.iter()
            .position(|n| n.code == code)
            .expect("known nta code")
    };
    let mut yellow_rank: Vec<usize> = YELLOW_TOP.iter().map(|c| index_of(c)).collect();
    for i in 0..ntas.len() {
        if !yellow_rank.contains(&i) {
            yellow_rank.push(i);
        }
    }
    let green_rank = (0..ntas.len()).collect();
    let airport = index_of("QN98");
    Geography {
        ntas,
        yellow_rank,
        green_rank,
        airport,
    }
}

fn mix(h: u64, k: u64) -> u64 {
    hash(&[h, k])
}

/// The taxi data set's neighbourhoods as a lookup table: CSV with the
/// header `ntacode,ntaname,borough,puma` and one row per NTA (195), the
/// codes the trips' `pickup_ntacode` and `dropoff_ntacode` take. The
/// `--demo` loads it as `zones`, to join with `trips`.
pub fn neighbourhoods_csv() -> Vec<u8> {
    let mut out = String::from("ntacode,ntaname,borough,puma\n");
    for (code, name, borough, puma, _, _) in NTAS {
        debug_assert!(!name.contains([',', '"']));
        let borough = BOROUGHS[borough as usize];
        out.push_str(&format!("{code},{name},{borough},{puma}\n"));
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn geography_is_consistent() {
        let g = geography();
        assert_eq!(g.ntas.len(), 195);
        let codes: HashSet<_> = g.ntas.iter().map(|n| n.code).collect();
        assert_eq!(codes.len(), 195);
        let pumas: HashSet<_> = g.ntas.iter().map(|n| n.puma).collect();
        assert_eq!(pumas.len(), 55);
        let mut gids = HashSet::new();
        let mut boroct = HashSet::new();
        for n in &g.ntas {
            assert!(!n.name.contains(',') && !n.name.contains('"'));
            assert!((1..=5).contains(&n.borocode));
            for t in &n.tracts {
                assert!(gids.insert(t.gid));
                assert!(boroct.insert(t.boroct2010));
                assert_eq!(t.ct2010.len(), 6);
                assert!(t.ct2010.starts_with('0'), "{}", t.ct2010);
                assert_eq!(t.boroct2010 / 1_000_000, n.borocode as u32);
            }
        }
        assert_eq!(gids.len(), *gids.iter().max().unwrap() as usize);
        assert_eq!(g.yellow_rank.len(), 195);
        assert_eq!(g.ntas[g.yellow_rank[0]].name, "Midtown-Midtown South");
    }
}
