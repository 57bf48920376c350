import { expect } from 'vitest';

export const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})$/;
export const datetime = expect.stringMatching(ISO_DATETIME);
export const nullableDatetime = expect.toSatisfy((v: unknown) => v === null || (typeof v === 'string' && ISO_DATETIME.test(v)), 'an ISO datetime or null');
export const uuid = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
