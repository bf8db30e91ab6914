import { z } from 'zod';

/**
 * Building blocks shared by the v1 modules: pieces of the response schemas,. Response schemas are plain
 * `z.object`s, which drop keys they do not know: a field the service adds later must not break a
 * client already deployed.
 */

/**
 * A string field the contract lists known values for (`platform`, `type`). Any string is accepted
 * so that a value the service adds later (a new platform) does not fail a whole page; the type
 * still offers the known values to editors.
 */
export function openEnum<const T extends string>(known: readonly T[]) {
  void known; // The values only shape the type; keeping them in the call documents them too.
  return z.string().transform((value): T | (string & {}) => value);
}

/**
 * An ISO 8601 timestamp as the service sends it (`2026-03-04T10:00:00.000Z`), kept as the string
 * that came over the wire; it must at least be a date `Date.parse` reads.
 */
export const timestampSchema = z.string().refine((text) => !Number.isNaN(Date.parse(text)), {
  message: 'must be an ISO 8601 timestamp',
});
