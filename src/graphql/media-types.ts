// The media type of a GraphQL answer, as the client's Accept header asks for it. GraphQL over HTTP:
// the server MUST answer in the highest priority media type listed that it supports; priority is
// the `q` weight, then the order given (RFC 9110 §12.5.1), and a range of weight 0 is refused.
// Yoga takes the first listed of the types it supports and reads no weight, so the header is put
// in order of preference before yoga reads it; answers made before yoga choose here.

const graphqlResponseJson = 'application/graphql-response+json';

const qvalue = /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/;

interface MediaRange {
  range: string;
  type: string;
  weight: number;
}

function mediaRanges(accept: string): MediaRange[] {
  return accept
    .split(',')
    .map((range) => range.trim())
    .filter(Boolean)
    .map((range) => {
      const [type, ...parameters] = range.split(';').map((part) => part.trim());
      // A weight that is no qvalue (RFC 9110 §12.4.2) is read as none given, as yoga reads every weight.
      const q = parameters.find((parameter) => /^q=/i.test(parameter))?.slice(2);
      const weight = q !== undefined && qvalue.test(q) ? Number(q) : 1;
      return { range, type: type.toLowerCase(), weight };
    });
}

/**
 * The Accept header with its media ranges in order of preference, those of weight 0 left out;
 * null when it accepts nothing (every range has weight 0), which is answered 406.
 */
export function inOrderOfPreference(accept: string): string | null {
  const ranges = mediaRanges(accept);
  const accepted = ranges.filter((range) => range.weight > 0);
  if (ranges.length && !accepted.length) return null;
  // Array.prototype.sort is stable: ranges of equal weight keep the order given.
  return accepted
    .sort((a, b) => b.weight - a.weight)
    .map((range) => range.range)
    .join(', ');
}

/**
 * The media type of a GraphQL answer made before yoga runs (a refused token, a body GraphQL is not
 * read from): application/graphql-response+json when the client prefers it to application/json,
 * application/json otherwise, as yoga chooses.
 */
export function graphqlAnswerType(accept: string | undefined): string {
  const preferred = inOrderOfPreference(accept ?? '') ?? '';
  for (const { type } of mediaRanges(preferred)) {
    if (type === graphqlResponseJson) return `${graphqlResponseJson}; charset=utf-8`;
    if (type === 'application/json' || type === 'application/*' || type === '*/*') break;
  }
  return 'application/json; charset=utf-8';
}

/** Whether the client weighs HTML highest (a browser opening the endpoint): it is shown GraphiQL. */
export function prefersHtml(accept: string | undefined): boolean {
  const [first] = mediaRanges(inOrderOfPreference(accept ?? '') ?? '');
  return first?.type === 'text/html';
}
