// Words for supplier names and descriptions, and the texts of reviews and supplier replies.

/** Regions, rivers and mountains: the middle word of many Romanian company names. */
export const SUPPLIER_REGIONS: readonly string[] = [
  'Ardeal',
  'Banat',
  'Moldova',
  'Carpați',
  'Dunărea',
  'Someș',
  'Mureș',
  'Olt',
  'Dobrogea',
  'Bucovina',
  'Crișana',
  'Oltenia',
  'Muntenia',
  'Bărăgan',
  'Maramureș',
  'Siret',
  'Prut',
  'Transilvania',
  'Bihor',
  'Făgăraș',
  'Ceahlău',
  'Retezat',
  'Delta',
  'Vest',
  'Nord',
  'Sud-Est',
];

export const SUPPLIER_SUFFIXES: readonly string[] = ['Distribuție', 'Trading', 'Com', 'Impex', 'Grup', 'Prod', 'Serv', 'Expert', 'Plus', 'Invest', 'Logistic'];

export const SUPPLIER_ROLES: readonly string[] = ['Distribuitor', 'Importator și distribuitor', 'Producător și distribuitor', 'Furnizor'];

export const SUPPLIER_SERVICES: readonly string[] = [
  'Livrăm în toată țara cu flotă proprie.',
  'Oferim consultanță tehnică gratuită și ofertare în 24 de ore.',
  'Depozit propriu de peste 5.000 m² și stoc permanent.',
  'Lucrăm cu firme de construcții, ateliere, magazine și instituții publice.',
  'Termen de plată la cerere pentru clienții recurenți.',
  'Emitem factura electronic prin e-Factura, în aceeași zi cu livrarea.',
];

export interface ReviewText {
  readonly titles: readonly string[];
  readonly comments: readonly string[];
}

/** Indexed by rating − 1. */
export const REVIEW_TEXTS: readonly ReviewText[] = [
  {
    titles: ['Nu recomand', 'Experiență neplăcută', 'Foarte slab'],
    comments: [
      'Produsul s-a defectat după o săptămână și încă așteptăm înlocuirea.',
      'Livrarea a durat trei săptămâni, fără nicio notificare din partea furnizorului.',
      'Marfa nu a corespuns comenzii, iar returul a fost complicat.',
    ],
  },
  {
    titles: ['Dezamăgit', 'Sub așteptări', 'Probleme la livrare'],
    comments: [
      'Am primit o cantitate mai mică decât cea comandată; s-a rezolvat, dar greu.',
      'Ambalaj deteriorat la livrare, două bucăți erau inutilizabile.',
      'Nu corespunde întru totul specificațiilor din descriere.',
    ],
  },
  {
    titles: ['Acceptabil', 'Nici bun, nici rău', 'Corect pentru preț'],
    comments: [
      'Își face treaba, dar finisajul lasă de dorit.',
      'Livrare întârziată cu câteva zile; produsul în sine este în regulă.',
      'Calitate medie, suficientă pentru utilizare ocazională.',
      'Culoarea diferă puțin față de fotografii.',
    ],
  },
  {
    titles: ['Foarte bun', 'Mulțumit', 'Bun raport calitate-preț', 'Recomand, cu mici observații'],
    comments: [
      'Produs bun; livrarea a durat o zi în plus față de estimare.',
      'Calitate bună, dar ambalajul ar putea fi mai rezistent.',
      'Corespunde descrierii. Instrucțiunile sunt doar în engleză.',
      'Bun pentru prețul ăsta, îl folosim zilnic în atelier.',
    ],
  },
  {
    titles: ['Excelent!', 'Recomand cu încredere', 'Exact ce aveam nevoie', 'Calitate foarte bună', 'Peste așteptări'],
    comments: [
      'Produsul corespunde întocmai descrierii, iar livrarea a fost rapidă. Vom comanda din nou.',
      'Am comandat pentru echipa de pe șantier și toată lumea este mulțumită.',
      'Raport calitate-preț foarte bun și ambalare atentă.',
      'A doua comandă de la acest furnizor, la fel de bună ca prima.',
      'Factura a venit odată cu marfa, totul în regulă.',
      'Comunicare excelentă și termen de livrare respectat.',
    ],
  },
];

export const SUPPLIER_RESPONSES_POSITIVE: readonly string[] = [
  'Vă mulțumim pentru apreciere! Vă așteptăm cu drag și la următoarea comandă.',
  'Mulțumim pentru recenzie, ne bucurăm că sunteți mulțumit.',
  'Vă mulțumim! Pentru comenzi recurente vă putem oferi condiții speciale.',
];

export const SUPPLIER_RESPONSES_NEGATIVE: readonly string[] = [
  'Ne pare rău pentru neplăcere. V-am contactat telefonic pentru a rezolva situația.',
  'Vă mulțumim pentru semnalare; am înlocuit produsul și am revizuit modul de ambalare.',
  'Ne cerem scuze pentru întârziere. Am schimbat firma de curierat pentru zona dumneavoastră.',
  'Mulțumim pentru feedback, vom ține cont de observații.',
];
