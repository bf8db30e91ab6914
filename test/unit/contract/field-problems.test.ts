import { describe, expect, it } from 'vitest';
import {
  charLength,
  describeProblems,
  joinPath,
  stringLengthProblem,
  underPath,
  unknownKeyProblems,
} from '../../../src/contract/field-problems.js';

describe('field problems', () => {
  it('joins paths with dots for keys and brackets for indexes', () => {
    expect(joinPath('', 'headline')).toBe('headline');
    expect(joinPath('headline', 'de')).toBe('headline.de');
    expect(joinPath('data', 3)).toBe('data[3]');
    expect(joinPath('', 2)).toBe('[2]');
  });

  it('prefixes problems with a base path', () => {
    expect(underPath('data[3].metrics', [
      { path: 'server_count', message: 'a' },
      { path: '', message: 'b' },
      { path: '[1].name', message: 'c' },
    ])).toEqual([
      { path: 'data[3].metrics.server_count', message: 'a' },
      { path: 'data[3].metrics', message: 'b' },
      { path: 'data[3].metrics[1].name', message: 'c' },
    ]);
  });

  it('describes problems in one line, calls the root "body" and caps the list', () => {
    expect(describeProblems([{ path: '', message: 'x' }, { path: 'a.b', message: 'y' }])).toBe('body: x; a.b: y');
    const many = Array.from({ length: 13 }, (_, i) => ({ path: `f${i}`, message: 'bad' }));
    const line = describeProblems(many, 10);
    expect(line).toContain('f9: bad');
    expect(line).not.toContain('f10');
    expect(line).toMatch(/and 3 more problems$/);
  });

  it('counts code points, not UTF-16 units', () => {
    expect(charLength('a😀b')).toBe(3);
    expect(stringLengthProblem('😀😀😀', 3, 5)).toBeNull();
    expect(stringLengthProblem('ab', 3, 5)).toBe('must be a string of 3 to 5 characters (got 2)');
    expect(stringLengthProblem(5, 3, 5)).toBe('must be a string of 3 to 5 characters (got number)');
  });

  it('names unknown keys', () => {
    expect(unknownKeyProblems({ a: 1, b: 2 }, ['a'], 'x')).toEqual([{ path: 'x.b', message: 'is not a known field (allowed: a)' }]);
  });
});
