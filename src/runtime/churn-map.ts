/**
 * Maps and sets for entries that come and go, such as a vote's state while it is in flight.
 *
 * Why they exist: a `Map` or `Set` that lives long enough is promoted to V8's old generation,
 * and from then on its table is rebuilt in the old generation too each time it grows, shrinks
 * or fills with deleted entries. The table it leaves behind still points to its entries until
 * the next full collection, so every value that passes through such a map outlives the young
 * generation's collections and is promoted with it. Measured on the vote path (100,000 votes):
 * about 400 bytes promoted per vote, the young generation growing to its largest size, and peak
 * RSS 20-30 MiB higher than the votes kept in memory need. A map of 100 entries set and deleted
 * 500,000 times promoted 59 MiB; the same map replaced by a fresh copy now and then, 5 MiB.
 *
 * So these wrap a `Map` (a `Set`) and replace it with a fresh copy after as many deletions as
 * it has entries (at least {@link RENEW_AFTER_DELETES}): the copy is young, its tables are young,
 * and what it leaves behind dies young. The copy costs one pass over the entries per that many
 * deletions: constant per deletion, however large the map.
 *
 * Iterating one while deleting from it sees the entries of the moment the iteration began.
 */

/** Deletions between two renewals, at least (a renewal copies the live entries, a few hundred at most under load). */
export const RENEW_AFTER_DELETES = 256;

/** Whether a map or set with `size` entries is renewed after `deletes` deletions: as many as it holds, and a few at least. */
const renewDue = (deletes: number, size: number): boolean => deletes >= RENEW_AFTER_DELETES && deletes >= size;

/** A `Map` for entries that come and go (see the module comment). */
export class ChurnMap<K, V> implements Iterable<[K, V]> {
  private map = new Map<K, V>();
  private deletes = 0;

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  set(key: K, value: V): this {
    this.map.set(key, value);
    return this;
  }

  delete(key: K): boolean {
    if (!this.map.delete(key)) return false;
    this.deletes += 1;
    if (renewDue(this.deletes, this.map.size)) {
      this.deletes = 0;
      this.map = new Map(this.map);
    }
    return true;
  }

  clear(): void {
    this.deletes = 0;
    this.map = new Map();
  }

  keys(): MapIterator<K> {
    return this.map.keys();
  }

  values(): MapIterator<V> {
    return this.map.values();
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.map.entries();
  }
}

/** A `Set` for members that come and go (see the module comment). */
export class ChurnSet<T> implements Iterable<T> {
  private set = new Set<T>();
  private deletes = 0;

  get size(): number {
    return this.set.size;
  }

  has(value: T): boolean {
    return this.set.has(value);
  }

  add(value: T): this {
    this.set.add(value);
    return this;
  }

  delete(value: T): boolean {
    if (!this.set.delete(value)) return false;
    this.deletes += 1;
    if (renewDue(this.deletes, this.set.size)) {
      this.deletes = 0;
      this.set = new Set(this.set);
    }
    return true;
  }

  clear(): void {
    this.deletes = 0;
    this.set = new Set();
  }

  [Symbol.iterator](): SetIterator<T> {
    return this.set.values();
  }
}
