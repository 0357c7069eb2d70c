import type { SavedAddress } from '../../accounts/profile.js';
import { html, type Html } from '../html.js';
import { errorSummary, field, form, type FieldErrors, type FieldValues } from '../layout.js';

// The account's delivery addresses: the list, the form that adds or edits one, and the
// confirmation before deleting one.

export function addressesPage(addresses: readonly SavedAddress[]): Html {
  return html`<p>Orders are shipped to one of these: its id is the <code>addressId</code> of <code>POST /api/orders</code> (also listed by <code>GET /api/me/addresses</code>).</p>
<p><a class="button" href="/dashboard/addresses/new">Add an address</a></p>
${
  addresses.length
    ? html`<table>
<thead><tr><th scope="col">Label</th><th scope="col">Address</th><th scope="col">addressId</th><th scope="col">Actions</th></tr></thead>
<tbody>${addresses.map(
        (address) => html`<tr>
<td>${address.label || 'Address'}${address.isDefault ? html` <strong>(default)</strong>` : ''}</td>
<td>${address.fullName}${address.companyName ? html`, ${address.companyName}` : ''}<br>${address.address}, ${address.city}, ${address.county} ${address.postalCode}<br>${address.phone}${address.email ? html` · ${address.email}` : ''}</td>
<td><code>${address.id}</code></td>
<td><a href="/dashboard/addresses/${address.id}">Edit<span class="skip-label"> ${address.label || address.address}</span></a> · <a href="/dashboard/addresses/${address.id}/delete">Delete<span class="skip-label"> ${address.label || address.address}</span></a></td>
</tr>`,
      )}</tbody>
</table>`
    : html`<p>No saved addresses yet.</p>`
}`;
}

/** `formToken`: a new address's form only (an edit saves the same address however often it is sent). */
export function addressFormPage(csrf: string, action: string, values: FieldValues & { isDefault?: string }, errors: FieldErrors = {}, formToken?: string): Html {
  const text = (name: string, label: string, opts: { required?: boolean; type?: 'text' | 'email' | 'tel'; autocomplete?: string; maxlength?: number } = {}) =>
    field({ name, label, value: values[name], error: errors[name], ...opts });
  return html`${errorSummary(errors)}
${form(
  action,
  csrf,
  html`${text('label', 'Label', { maxlength: 50 })}
${text('fullName', 'Full name', { required: true, autocomplete: 'name', maxlength: 100 })}
${text('companyName', 'Company', { autocomplete: 'organization', maxlength: 200 })}
${text('phone', 'Phone', { required: true, type: 'tel', autocomplete: 'tel', maxlength: 40 })}
${text('email', 'E-mail address', { type: 'email', autocomplete: 'email' })}
${text('address', 'Street address', { required: true, autocomplete: 'street-address', maxlength: 200 })}
${text('city', 'City', { required: true, autocomplete: 'address-level2', maxlength: 100 })}
${text('county', 'County', { required: true, autocomplete: 'address-level1', maxlength: 100 })}
${text('postalCode', 'Postal code', { required: true, autocomplete: 'postal-code', maxlength: 20 })}
<div class="field checks"><label><input type="checkbox" name="isDefault" value="true"${values.isDefault === 'true' ? html` checked` : ''}> Use as my default address</label></div>`,
  'Save address',
  { formToken },
)}
<p><a href="/dashboard/addresses">Back to addresses</a></p>`;
}

export function deleteAddressPage(csrf: string, address: SavedAddress): Html {
  return html`<p>Delete the address “${address.label || address.address}” (${address.address}, ${address.city})? Orders already shipped to it keep their copy.</p>
<div class="actions">
${form(`/dashboard/addresses/${address.id}/delete`, csrf, '', 'Delete address', { className: 'inline', destructive: true })}
<a href="/dashboard/addresses">Cancel</a>
</div>`;
}
