import { z } from 'zod';
import { type Validated, invalid } from '../../contract/field-problems.js';
import { checkRequest } from '../context.js';

/**
 * Building blocks shared by the v1 modules: pieces of the response schemas, and the check that
 * turns a contract validator's result into a request `ValidationError`. Response schemas are plain
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
export const timestampSchema = z.string().refine((value) => !Number.isNaN(Date.parse(value)), {
  message: 'must be an ISO 8601 timestamp',
});

/**
 * The value of a contract validator's result, or the request `ValidationError` naming every
 * problem (thrown before anything is sent). A typed companion of `checkRequest`.
 */
export function requireValid<T>(operation: string, result: Validated<T>): T {
  if (result.ok) return result.value;
  checkRequest(operation, result.problems);
  // A failed Validated always names a problem, so checkRequest has thrown; this keeps the types honest.
  throw new TypeError(`${operation}: a validator failed without naming a problem`);
}

/** Throws the request `ValidationError` for one problem at `path` (nothing is sent). */
export function refuseRequest(operation: string, path: string, message: string): never {
  return requireValid<never>(operation, invalid(path, message));
}
