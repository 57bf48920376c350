// Stripe's v1 request bodies: application/x-www-form-urlencoded with bracketed keys. `a[b][c]=1`
// is a nested object, `a[0]=x` and `a[]=x` are arrays, and an empty value means "unset" (null).
// Query strings on GET use the same encoding.

export type FormValue = string | null | FormValue[] | FormObject;
export interface FormObject {
  [key: string]: FormValue;
}

/** Parses a form-encoded body into nested objects and arrays, the way Stripe reads it. */
export function parseForm(body: string): FormObject {
  const root: FormObject = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const path = splitKey(key);
    let node: FormObject | FormValue[] = root;
    path.forEach((segment, index) => {
      const last = index === path.length - 1;
      const container = node as Record<string | number, FormValue>;
      const slot = segment === '' ? (node as FormValue[]).length : segment;
      if (last) {
        container[slot] = value === '' ? null : value;
        return;
      }
      if (container[slot] === undefined || container[slot] === null || typeof container[slot] === 'string') {
        const next = path[index + 1];
        container[slot] = next === '' || /^\d+$/.test(next) ? [] : {};
      }
      node = container[slot] as FormObject | FormValue[];
    });
  }
  return root;
}

function splitKey(key: string): string[] {
  const open = key.indexOf('[');
  if (open === -1) return [key];
  const segments = [key.slice(0, open)];
  for (const match of key.slice(open).matchAll(/\[([^\]]*)\]/g)) segments.push(match[1]);
  return segments;
}

/** A canonical string of the parameters, for comparing a replayed idempotent request with the first. */
export function fingerprint(params: FormObject): string {
  const canonical = (value: FormValue): unknown => {
    if (value === null || typeof value === 'string') return value;
    if (Array.isArray(value)) return value.map(canonical);
    return Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical(value[key])]));
  };
  return JSON.stringify(canonical(params));
}
