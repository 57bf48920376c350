// Interfaces for the fields several views of one model share (an order as its organization and as
// its customer see it): built by the same helper as the types, so a field is defined once. Each
// type keeps its own `id`, which is not part of these interfaces.

/** The fields without `id`. */
export function withoutId<Fields extends { id?: unknown }>(fields: Fields): Omit<Fields, 'id'> {
  const { id: _id, ...shared } = fields;
  return shared;
}
