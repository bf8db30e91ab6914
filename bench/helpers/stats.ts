/** The few statistics the benches share: every target is held on the median of a bench's runs. */

/** The median of `values` (the mean of the two middle ones for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** `met`, or `**not met**` (bold, so a miss stands out in a table). */
export const verdict = (met: boolean): string => (met ? 'met' : '**not met**');
