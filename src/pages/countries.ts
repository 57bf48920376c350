// The country picker the hosted pages share: every ISO 3166-1 country by name (src/countries.ts),
// posting its code. A plain select, so it works without JavaScript and chooses by typing a name.
import { countries } from '../countries.ts';
import { html, type Html } from './html.ts';

export interface CountryPicker {
  id: string;
  name: string;
  label: string;
  value: string | null | undefined;
  required: boolean;
  /** The refusal to show above it, if any, as `<id>-error`. */
  error?: string;
}

export function countrySelect({ id, name, label, value, required, error }: CountryPicker): Html {
  const selected = value?.toUpperCase() ?? '';
  return html`<label for="${id}">${label}${required ? '' : html` <span class="muted">(optional)</span>`}</label>
${error ? html`<p class="error" id="${id}-error">${error}</p>` : ''}
<select id="${id}" name="${name}" autocomplete="country"${required ? html` required` : ''}${error ? html` aria-invalid="true" aria-describedby="${id}-error"` : ''}>
<option value=""${selected ? '' : html` selected`}>Choose a country</option>
${countries().map(({ code, name: country }) => html`<option value="${code}"${code === selected ? html` selected` : ''}>${country}</option>\n`)}</select>`;
}
