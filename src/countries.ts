// Countries as ISO 3166-1 alpha-2 assigns them: what an address's `country` may be, and the list
// the hosted checkout page offers. Names come from Intl in the reader's language; the codes do not,
// because Intl also names regions that are not countries (EU, UN, 419) and withdrawn codes (YU, ZR,
// UK as an alias of GB), which a payment processor refuses.
// Neutral: it imports nothing of Kassa, so modules, pages and wire/ can all use it.

/**
 * Every officially assigned code (249, as of the standard's 2024 edition), plus XK for Kosovo,
 * which ISO leaves user-assigned but banks and card networks use.
 */
const codes = `
AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT
BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH
ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT
HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS
LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI
NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG
SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG
UM US UY UZ VA VC VE VG VI VN VU WF WS XK YE YT ZA ZM ZW`
  .trim()
  .split(/\s+/);

const assigned: ReadonlySet<string> = new Set(codes);

/** Whether `code` is an assigned ISO 3166-1 alpha-2 country code, in capitals (`US`, not `us` or `USA`). */
export function isCountry(code: string): boolean {
  return assigned.has(code);
}

const namesByLocale = new Map<string, Intl.DisplayNames>();

/** The country's name in `locale` (English by default): "Germany" for DE. */
export function countryName(code: string, locale = 'en'): string {
  let names = namesByLocale.get(locale);
  if (!names) namesByLocale.set(locale, (names = new Intl.DisplayNames([locale, 'en'], { type: 'region', fallback: 'code' })));
  return names.of(code) ?? code;
}

const listsByLocale = new Map<string, readonly { code: string; name: string }[]>();

/** Every country as code and name in `locale`, sorted by name as that language sorts: a picker's options. */
export function countries(locale = 'en'): readonly { code: string; name: string }[] {
  let list = listsByLocale.get(locale);
  if (!list) {
    const collator = new Intl.Collator(locale);
    list = Object.freeze(codes.map((code) => ({ code, name: countryName(code, locale) })).sort((a, b) => collator.compare(a.name, b.name)));
    listsByLocale.set(locale, list);
  }
  return list;
}
