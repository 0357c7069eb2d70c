// Demo buyer accounts with their saved delivery addresses, and the demo coupons. Cities are
// names from geo.ts so that county and postal code are taken from the same row.

export interface DemoAddress {
  readonly label: string;
  readonly fullName: string;
  readonly companyName: string | null;
  readonly phone: string;
  readonly address: string;
  readonly city: string;
  readonly isDefault: boolean;
}

export interface DemoAccount {
  readonly email: string;
  readonly name: string;
  readonly companyName: string | null;
  readonly phone: string | null;
  readonly addresses: readonly DemoAddress[];
}

export const DEMO_ACCOUNTS: readonly DemoAccount[] = [
  {
    email: 'buyer@example.com',
    name: 'Andrei Popescu',
    companyName: null,
    phone: '+40 722 100 200',
    addresses: [
      {
        label: 'Acasă',
        fullName: 'Andrei Popescu',
        companyName: null,
        phone: '+40 722 100 200',
        address: 'Str. Mihai Eminescu nr. 14, ap. 3',
        city: 'Cluj-Napoca',
        isDefault: true,
      },
      {
        label: 'Birou',
        fullName: 'Andrei Popescu',
        companyName: 'Popescu Consultanță S.R.L.',
        phone: '+40 264 450 120',
        address: 'Bd. 21 Decembrie 1989 nr. 77, et. 2',
        city: 'Cluj-Napoca',
        isDefault: false,
      },
    ],
  },
  {
    email: 'achizitii@constructii-moldova.example.com',
    name: 'Elena Rusu',
    companyName: 'Construcții Moldova S.R.L.',
    phone: '+40 232 210 455',
    addresses: [
      {
        label: 'Sediu',
        fullName: 'Elena Rusu',
        companyName: 'Construcții Moldova S.R.L.',
        phone: '+40 232 210 455',
        address: 'Str. Păcurari nr. 122',
        city: 'Iași',
        isDefault: true,
      },
      {
        label: 'Șantier Copou',
        fullName: 'Vasile Ciobanu',
        companyName: 'Construcții Moldova S.R.L.',
        phone: '+40 744 318 902',
        address: 'Bd. Carol I nr. 60',
        city: 'Iași',
        isDefault: false,
      },
    ],
  },
  {
    email: 'aprovizionare@hotel-carpati.example.com',
    name: 'Mihai Dumitrescu',
    companyName: 'Hotel Carpați Brașov S.A.',
    phone: '+40 268 415 300',
    addresses: [
      {
        label: 'Recepție marfă',
        fullName: 'Mihai Dumitrescu',
        companyName: 'Hotel Carpați Brașov S.A.',
        phone: '+40 268 415 300',
        address: 'Str. Lungă nr. 41',
        city: 'Brașov',
        isDefault: true,
      },
    ],
  },
  {
    email: 'office@agro-banat.example.com',
    name: 'Ioana Stan',
    companyName: 'Agro Banat Cereale S.R.L.',
    phone: '+40 256 490 118',
    addresses: [
      {
        label: 'Fermă',
        fullName: 'Ioana Stan',
        companyName: 'Agro Banat Cereale S.R.L.',
        phone: '+40 745 220 631',
        address: 'Calea Aradului nr. 250',
        city: 'Timișoara',
        isDefault: true,
      },
      {
        label: 'Siloz Arad',
        fullName: 'Dan Mihăilă',
        companyName: 'Agro Banat Cereale S.R.L.',
        phone: '+40 757 114 209',
        address: 'Str. Ștefan cel Mare nr. 3',
        city: 'Arad',
        isDefault: false,
      },
    ],
  },
  {
    email: 'comenzi@birotica-dobrogea.example.com',
    name: 'Cristian Marin',
    companyName: 'Birotica Dobrogea S.R.L.',
    phone: '+40 241 555 872',
    addresses: [
      {
        label: 'Depozit',
        fullName: 'Cristian Marin',
        companyName: 'Birotica Dobrogea S.R.L.',
        phone: '+40 241 555 872',
        address: 'Bd. Aurel Vlaicu nr. 180',
        city: 'Constanța',
        isDefault: true,
      },
    ],
  },
];

export interface DemoCoupon {
  readonly code: string;
  readonly type: 'PERCENTAGE' | 'FIXED';
  /** Percent for PERCENTAGE, RON for FIXED. */
  readonly value: string;
  readonly minSubtotal: string;
  /** Days relative to the seed's base date. */
  readonly validFromDays: number;
  /** Days relative to the base date, an absolute ISO date, or null for no end. */
  readonly validUntil: number | string | null;
  readonly isActive: boolean;
  /** Index into the active suppliers, for coupons of a single supplier. */
  readonly supplier: number | null;
}

/**
 * A coupon of every kind an order flow meets: open-ended, ending far in the future, expired,
 * not yet started, inactive, with and without a minimum subtotal, for all or one supplier.
 */
export const DEMO_COUPONS: readonly DemoCoupon[] = [
  { code: 'BINEATI10', type: 'PERCENTAGE', value: '10.00', minSubtotal: '0.00', validFromDays: -365, validUntil: null, isActive: true, supplier: null },
  { code: 'LIVRARE50', type: 'FIXED', value: '50.00', minSubtotal: '500.00', validFromDays: -180, validUntil: '2035-12-31T21:59:59.000Z', isActive: true, supplier: null },
  { code: 'B2B15', type: 'PERCENTAGE', value: '15.00', minSubtotal: '2000.00', validFromDays: -30, validUntil: null, isActive: true, supplier: null },
  { code: 'TOAMNA20', type: 'PERCENTAGE', value: '20.00', minSubtotal: '300.00', validFromDays: -14, validUntil: 14, isActive: true, supplier: null },
  { code: 'VARA2024', type: 'PERCENTAGE', value: '12.00', minSubtotal: '0.00', validFromDays: -400, validUntil: -300, isActive: true, supplier: null },
  { code: 'EXPIRAT100', type: 'FIXED', value: '100.00', minSubtotal: '1000.00', validFromDays: -120, validUntil: -60, isActive: true, supplier: null },
  { code: 'INACTIV25', type: 'PERCENTAGE', value: '25.00', minSubtotal: '0.00', validFromDays: -60, validUntil: null, isActive: false, supplier: null },
  { code: 'VIITOR30', type: 'PERCENTAGE', value: '30.00', minSubtotal: '0.00', validFromDays: 3650, validUntil: null, isActive: true, supplier: null },
  { code: 'PARTENER10', type: 'PERCENTAGE', value: '10.00', minSubtotal: '0.00', validFromDays: -200, validUntil: null, isActive: true, supplier: 0 },
  { code: 'PARTENER75', type: 'FIXED', value: '75.00', minSubtotal: '750.00', validFromDays: -90, validUntil: '2035-12-31T21:59:59.000Z', isActive: true, supplier: 1 },
  { code: 'FIDELITATE5', type: 'PERCENTAGE', value: '5.00', minSubtotal: '100.00', validFromDays: -500, validUntil: null, isActive: true, supplier: 2 },
  { code: 'LICHIDARE40', type: 'PERCENTAGE', value: '40.00', minSubtotal: '0.00', validFromDays: -90, validUntil: -30, isActive: true, supplier: 3 },
];
