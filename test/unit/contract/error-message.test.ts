import { describe, expect, it } from 'vitest';
import { errorMessage, ListingAgentError } from '../../../src/errors.js';

describe('errorMessage', () => {
  it("is an error's message, and anything else thrown as text", () => {
    expect(errorMessage(new ListingAgentError('x', 'the service said no'))).toBe('the service said no');
    expect(errorMessage('a string was thrown')).toBe('a string was thrown');
    expect(errorMessage(42)).toBe('42');
    expect(errorMessage(undefined)).toBe('undefined');
  });
});
