import { describe, expect, it } from 'vitest';
import { CONTRACT_LIMITS } from '../../../src/contract/limits.js';
import { validateAnnouncement, validateProjectEdit } from '../../../src/contract/project-edit.js';

const text = (n: number) => 'x'.repeat(n);
const problemsOf = (result: { ok: boolean; problems?: { path: string; message: string }[] }) =>
  result.ok ? [] : result.problems!;

describe('validateProjectEdit', () => {
  it('accepts headline and page_content at their bounds', () => {
    const { headlineMinLength: hMin, headlineMaxLength: hMax, pageContentMinLength: pMin, pageContentMaxLength: pMax } = CONTRACT_LIMITS;
    expect(validateProjectEdit({ headline: { en: text(hMin), de: text(hMax) } })).toEqual({
      ok: true,
      value: { headline: { en: text(hMin), de: text(hMax) } },
    });
    expect(validateProjectEdit({ page_content: { fr: text(pMin), zh: text(pMax) } }).ok).toBe(true);
  });

  it('rejects lengths just outside the bounds, naming locale and field', () => {
    expect(problemsOf(validateProjectEdit({ headline: { en: text(2) } }))).toEqual([
      { path: 'headline.en', message: 'must be a string of 3 to 140 characters (got 2)' },
    ]);
    expect(problemsOf(validateProjectEdit({ headline: { en: text(141) } }))[0]?.path).toBe('headline.en');
    expect(problemsOf(validateProjectEdit({ page_content: { de: text(299) } }))[0]?.path).toBe('page_content.de');
    expect(problemsOf(validateProjectEdit({ page_content: { de: text(50_001) } }))[0]?.message).toContain('got 50001');
  });

  it('rejects unsupported locales, empty maps, non-objects, unknown fields and an empty body', () => {
    expect(problemsOf(validateProjectEdit({ headline: { 'en-US': text(10) } }))[0]).toMatchObject({ path: 'headline.en-US' });
    expect(problemsOf(validateProjectEdit({ headline: {} }))[0]).toMatchObject({ path: 'headline' });
    expect(problemsOf(validateProjectEdit({ headline: 'hello there' }))[0]).toMatchObject({ path: 'headline' });
    expect(problemsOf(validateProjectEdit({ headline: { en: text(10) }, description: 'x' }))[0]).toMatchObject({ path: 'description' });
    expect(problemsOf(validateProjectEdit({}))[0]).toMatchObject({ path: '', message: expect.stringContaining('at least one') });
    expect(problemsOf(validateProjectEdit([]))[0]).toMatchObject({ path: '' });
  });
});

describe('validateAnnouncement', () => {
  const ok = { title: text(3), content: text(10) };

  it('defaults the category and accepts the bounds', () => {
    expect(validateAnnouncement(ok)).toEqual({ ok: true, value: { ...ok, category: 'announcement' } });
    expect(validateAnnouncement({ title: text(100), content: text(2000), category: 'new_feature' }).ok).toBe(true);
  });

  it('rejects lengths outside the bounds and unknown categories', () => {
    expect(problemsOf(validateAnnouncement({ ...ok, title: text(2) }))[0]?.path).toBe('title');
    expect(problemsOf(validateAnnouncement({ ...ok, title: text(101) }))[0]?.path).toBe('title');
    expect(problemsOf(validateAnnouncement({ ...ok, content: text(9) }))[0]?.path).toBe('content');
    expect(problemsOf(validateAnnouncement({ ...ok, content: text(2001) }))[0]?.path).toBe('content');
    expect(problemsOf(validateAnnouncement({ ...ok, category: 'news' }))[0]).toMatchObject({
      path: 'category',
      message: 'must be one of announcement, event, new_feature',
    });
    expect(problemsOf(validateAnnouncement({ ...ok, category: null }))[0]?.path).toBe('category');
    expect(problemsOf(validateAnnouncement({ content: text(10) }))[0]?.path).toBe('title');
  });
});
