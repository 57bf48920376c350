// The lengths of time counts are grouped by: a meter's quantities and the revenue metrics both
// take one, and both start each group at the local start of that length in the requested zone.
import { timeIntervals } from '../calendar.ts';
import { builder } from './builder.ts';

export const TimeInterval = builder.enumType('TimeInterval', {
  description: 'The length of the groups a range is counted in, each starting where that length starts in the requested time zone.',
  values: {
    hour: { description: 'An hour, in absolute time: a day the clocks change on has 23 or 25.' },
    day: { description: 'A day, from local midnight.' },
    week: { description: "A week, from Monday's local midnight." },
    month: { description: "A month, from the first's local midnight." },
    year: { description: "A year, from January 1st's local midnight." },
  } satisfies Record<(typeof timeIntervals)[number], object>,
});
