/**
 * What `promise` rejects with; fails the test when it resolves instead.
 * `T` is the caller's expectation of the reason (no check is made: assert on it).
 */
export async function rejection<T = Error>(promise: Promise<unknown>): Promise<T> {
  try {
    await promise;
  } catch (error) {
    return error as T;
  }
  throw new Error('expected a rejection');
}
