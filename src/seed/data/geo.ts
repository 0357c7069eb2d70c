// Romanian cities with the county (județ) they belong to. Supplier and address rows take city,
// county, landline prefix and postal code from here, so the four always agree.

export interface City {
  readonly city: string;
  readonly county: string;
  /** Landline area code without the leading 0 (2 digits for Bucharest/Ilfov, else 3). */
  readonly areaCode: string;
  /** First digits of the city's postal codes; the rest are filled in. */
  readonly postalPrefix: string;
  /** Relative share of suppliers: large business centres host more of them. */
  readonly weight: number;
}

export const CITIES: readonly City[] = [
  { city: 'București', county: 'București', areaCode: '21', postalPrefix: '0', weight: 8 },
  { city: 'Cluj-Napoca', county: 'Cluj', areaCode: '264', postalPrefix: '400', weight: 4 },
  { city: 'Timișoara', county: 'Timiș', areaCode: '256', postalPrefix: '300', weight: 4 },
  { city: 'Iași', county: 'Iași', areaCode: '232', postalPrefix: '700', weight: 3 },
  { city: 'Brașov', county: 'Brașov', areaCode: '268', postalPrefix: '500', weight: 3 },
  { city: 'Constanța', county: 'Constanța', areaCode: '241', postalPrefix: '900', weight: 3 },
  { city: 'Craiova', county: 'Dolj', areaCode: '251', postalPrefix: '200', weight: 2 },
  { city: 'Galați', county: 'Galați', areaCode: '236', postalPrefix: '800', weight: 2 },
  { city: 'Ploiești', county: 'Prahova', areaCode: '244', postalPrefix: '100', weight: 2 },
  { city: 'Oradea', county: 'Bihor', areaCode: '259', postalPrefix: '410', weight: 2 },
  { city: 'Sibiu', county: 'Sibiu', areaCode: '269', postalPrefix: '550', weight: 2 },
  { city: 'Târgu Mureș', county: 'Mureș', areaCode: '265', postalPrefix: '540', weight: 2 },
  { city: 'Bacău', county: 'Bacău', areaCode: '234', postalPrefix: '600', weight: 1 },
  { city: 'Pitești', county: 'Argeș', areaCode: '248', postalPrefix: '110', weight: 2 },
  { city: 'Arad', county: 'Arad', areaCode: '257', postalPrefix: '310', weight: 2 },
  { city: 'Suceava', county: 'Suceava', areaCode: '230', postalPrefix: '720', weight: 1 },
  { city: 'Baia Mare', county: 'Maramureș', areaCode: '262', postalPrefix: '430', weight: 1 },
  { city: 'Brăila', county: 'Brăila', areaCode: '239', postalPrefix: '810', weight: 1 },
  { city: 'Buzău', county: 'Buzău', areaCode: '238', postalPrefix: '120', weight: 1 },
  { city: 'Satu Mare', county: 'Satu Mare', areaCode: '261', postalPrefix: '440', weight: 1 },
  { city: 'Botoșani', county: 'Botoșani', areaCode: '231', postalPrefix: '710', weight: 1 },
  { city: 'Râmnicu Vâlcea', county: 'Vâlcea', areaCode: '250', postalPrefix: '240', weight: 1 },
  { city: 'Piatra Neamț', county: 'Neamț', areaCode: '233', postalPrefix: '610', weight: 1 },
  { city: 'Drobeta-Turnu Severin', county: 'Mehedinți', areaCode: '252', postalPrefix: '220', weight: 1 },
  { city: 'Focșani', county: 'Vrancea', areaCode: '237', postalPrefix: '620', weight: 1 },
  { city: 'Târgoviște', county: 'Dâmbovița', areaCode: '245', postalPrefix: '130', weight: 1 },
  { city: 'Bistrița', county: 'Bistrița-Năsăud', areaCode: '263', postalPrefix: '420', weight: 1 },
  { city: 'Reșița', county: 'Caraș-Severin', areaCode: '255', postalPrefix: '320', weight: 1 },
  { city: 'Alba Iulia', county: 'Alba', areaCode: '258', postalPrefix: '510', weight: 1 },
  { city: 'Deva', county: 'Hunedoara', areaCode: '254', postalPrefix: '330', weight: 1 },
  { city: 'Zalău', county: 'Sălaj', areaCode: '260', postalPrefix: '450', weight: 1 },
  { city: 'Sfântu Gheorghe', county: 'Covasna', areaCode: '267', postalPrefix: '520', weight: 1 },
  { city: 'Miercurea Ciuc', county: 'Harghita', areaCode: '266', postalPrefix: '530', weight: 1 },
  { city: 'Slatina', county: 'Olt', areaCode: '249', postalPrefix: '230', weight: 1 },
  { city: 'Târgu Jiu', county: 'Gorj', areaCode: '253', postalPrefix: '210', weight: 1 },
  { city: 'Vaslui', county: 'Vaslui', areaCode: '235', postalPrefix: '730', weight: 1 },
  { city: 'Tulcea', county: 'Tulcea', areaCode: '240', postalPrefix: '820', weight: 1 },
  { city: 'Slobozia', county: 'Ialomița', areaCode: '243', postalPrefix: '920', weight: 1 },
  { city: 'Călărași', county: 'Călărași', areaCode: '242', postalPrefix: '910', weight: 1 },
  { city: 'Giurgiu', county: 'Giurgiu', areaCode: '246', postalPrefix: '080', weight: 1 },
  { city: 'Alexandria', county: 'Teleorman', areaCode: '247', postalPrefix: '140', weight: 1 },
  { city: 'Voluntari', county: 'Ilfov', areaCode: '21', postalPrefix: '077', weight: 2 },
  { city: 'Otopeni', county: 'Ilfov', areaCode: '21', postalPrefix: '075', weight: 1 },
];

/** City → county, for checks that a seeded row's county matches its city. */
export const COUNTY_OF_CITY: ReadonlyMap<string, string> = new Map(CITIES.map((c) => [c.city, c.county]));

export const STREETS: readonly string[] = [
  'Str. Fabricii',
  'Str. Depozitelor',
  'Str. Industriilor',
  'Str. Gării',
  'Str. Mihai Eminescu',
  'Str. Avram Iancu',
  'Str. Ștefan cel Mare',
  'Str. Libertății',
  'Str. Unirii',
  'Str. Morii',
  'Str. Meșteșugarilor',
  'Str. Transportatorilor',
  'Str. Zorilor',
  'Str. Florilor',
  'Str. Câmpului',
  'Str. Tudor Vladimirescu',
  'Str. Nicolae Bălcescu',
  'Str. Mărășești',
  'Bd. Independenței',
  'Bd. Republicii',
  'Bd. 1 Decembrie 1918',
  'Bd. Tineretului',
  'Calea Națională',
  'Calea Industriei',
  'Șos. de Centură',
  'Șos. Națională',
];

/** Industrial parks and zones, for suppliers that run a warehouse rather than an office. */
export const ZONES: readonly string[] = [
  'Zona Industrială Vest',
  'Zona Industrială Est',
  'Parcul Logistic Nord',
  'Parcul Industrial Sud',
  'Platforma Industrială',
];

/** Romanian mobile prefixes in use by the main operators. */
export const MOBILE_PREFIXES: readonly string[] = ['722', '723', '724', '730', '740', '744', '745', '751', '755', '762', '766', '770', '771', '787'];
