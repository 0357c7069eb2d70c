import { addressOf, createAddress, deleteAddress, listAddresses, updateAddress } from '../accounts/profile.js';
import { AppError } from '../shared/errors.js';
import type { FieldValues } from './layout.js';
import { createOnce, newFormToken } from './form-once.js';
import { addressesPage, addressFormPage, deleteAddressPage } from './pages/addresses-page.js';
import { formRefusal, pick, readForm, redirectTo, showPage, type SignedInVisit } from './visit.js';

// The account's delivery addresses: the ids that POST /api/orders ships to.

const ADDRESS_FIELDS = ['label', 'fullName', 'companyName', 'phone', 'email', 'address', 'city', 'county', 'postalCode', 'isDefault'] as const;
const NEW_ADDRESS_PATH = '/dashboard/addresses';
const NO_ADDRESS = 'There is no such address among yours.';

/** Where an address's form posts: the list for a new one, the address's own page for an edit. */
const formPathOf = (id: string | undefined) => (id === undefined ? NEW_ADDRESS_PATH : `/dashboard/addresses/${id}`);

function showAddressForm(visit: SignedInVisit, status: number, id: string | undefined, values: FieldValues, errors: Record<string, string> = {}) {
  const title = id === undefined ? 'Add an address' : 'Edit address';
  const formToken = id === undefined ? newFormToken() : undefined;
  return showPage(visit, status, { title, current: 'addresses', body: addressFormPage(visit.csrfToken, formPathOf(id), values, errors, formToken) });
}

async function addressOrNotFound(visit: SignedInVisit, id: string) {
  const address = await addressOf(visit.ctx, visit.session.accountId, id);
  if (!address) throw new AppError('NOT_FOUND', NO_ADDRESS);
  return address;
}

export async function getAddresses(visit: SignedInVisit) {
  const addresses = await listAddresses(visit.ctx, visit.session.accountId);
  return showPage(visit, 200, { title: 'Addresses', current: 'addresses', body: addressesPage(addresses) });
}

export async function getNewAddress(visit: SignedInVisit) {
  return showAddressForm(visit, 200, undefined, {});
}

export async function getAddress(visit: SignedInVisit, [id]: string[]) {
  const address = await addressOrNotFound(visit, id!);
  const values = Object.fromEntries(ADDRESS_FIELDS.map((name) => [name, name === 'isDefault' ? String(address.isDefault) : (address[name] ?? '')]));
  return showAddressForm(visit, 200, address.id, values);
}

/** Adds an address (no id) or saves one of the account's. */
export async function postAddress(visit: SignedInVisit, [id]: string[]) {
  const form = await readForm(visit);
  const values = pick(form, ADDRESS_FIELDS);
  const input = {
    ...values,
    fullName: values.fullName ?? '',
    phone: values.phone ?? '',
    address: values.address ?? '',
    city: values.city ?? '',
    county: values.county ?? '',
    postalCode: values.postalCode ?? '',
    isDefault: values.isDefault === 'true',
  };
  const accountId = visit.session.accountId;
  try {
    // Sent again, a new address's form leads where the first sending did: the saved list.
    if (id === undefined) await createOnce(visit, form, 'address', (step) => createAddress(visit.ctx, accountId, input, step));
    else if (!(await updateAddress(visit.ctx, accountId, id, input))) throw new AppError('NOT_FOUND', NO_ADDRESS);
    return redirectTo(visit, '/dashboard/addresses?done=address-saved');
  } catch (error) {
    const refused = formRefusal(error);
    // A refusal of no one field (the most addresses an account may keep) is shown at the street address.
    return showAddressForm(visit, 400, id, values, { ...refused.fields, ...(Object.keys(refused.fields).length ? {} : { address: refused.message }) });
  }
}

export async function getDeleteAddress(visit: SignedInVisit, [id]: string[]) {
  const address = await addressOrNotFound(visit, id!);
  return showPage(visit, 200, { title: 'Delete address', current: 'addresses', body: deleteAddressPage(visit.csrfToken, address) });
}

export async function postDeleteAddress(visit: SignedInVisit, [id]: string[]) {
  await readForm(visit);
  if (!(await deleteAddress(visit.ctx, visit.session.accountId, id!))) throw new AppError('NOT_FOUND', NO_ADDRESS);
  return redirectTo(visit, '/dashboard/addresses?done=address-deleted');
}
