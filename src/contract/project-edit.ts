import {
  type FieldProblem,
  type Validated,
  invalid,
  isJsonObject,
  joinPath,
  jsonTypeName,
  stringLengthProblem,
  unknownKeyProblems,
} from './field-problems.js';
import {
  ANNOUNCEMENT_CATEGORIES,
  type AnnouncementCategory,
  CONTRACT_LIMITS,
  SUPPORTED_LOCALES,
  type SupportedLocale,
} from './limits.js';

/**
 * The rules of `PATCH /projects/:id` (headline and page content per locale) and
 * `POST /projects/:id/announcements`, shared by the emulator (422) and clients that check a request
 * before sending it. Lengths count Unicode code points and are not trimmed.
 */

/** Text per supported locale, as `headline` and `page_content` take it. */
export type LocalizedText = Partial<Record<SupportedLocale, string>>;

/** A valid body of `PATCH /projects/:id`: at least one of the two maps. */
export interface ProjectEdit {
  headline?: LocalizedText;
  page_content?: LocalizedText;
}

/** The fields `PATCH /projects/:id` accepts; any other key is a 422. */
const PROJECT_EDIT_FIELDS = ['headline', 'page_content'] as const;

/** Why `value` is not a valid headline (3 to 140 characters), or null when it is. */
export function headlineProblem(value: unknown): string | null {
  return stringLengthProblem(value, CONTRACT_LIMITS.headlineMinLength, CONTRACT_LIMITS.headlineMaxLength);
}

/** Why `value` is not valid page content (Markdown, 300 to 50,000 characters), or null when it is. */
export function pageContentProblem(value: unknown): string | null {
  return stringLengthProblem(value, CONTRACT_LIMITS.pageContentMinLength, CONTRACT_LIMITS.pageContentMaxLength);
}

/** True when `key` is one of {@link SUPPORTED_LOCALES}. */
function isSupportedLocale(key: string): key is SupportedLocale {
  return (SUPPORTED_LOCALES as readonly string[]).includes(key);
}

/**
 * Problems of one locale map (`headline` or `page_content`): it must be an object with at least
 * one entry, every key a supported locale, every value valid by `valueProblem`.
 */
function localizedTextProblems(
  field: string,
  value: unknown,
  valueProblem: (text: unknown) => string | null,
): FieldProblem[] {
  if (!isJsonObject(value)) {
    return [{ path: field, message: `must be an object mapping a locale to a string (got ${jsonTypeName(value)})` }];
  }
  const keys = Object.keys(value);
  // An empty map changes nothing, so it does not count as "given".
  if (keys.length === 0) return [{ path: field, message: `must hold at least one locale (${SUPPORTED_LOCALES.join(', ')})` }];
  const problems: FieldProblem[] = [];
  for (const key of keys) {
    const path = joinPath(field, key);
    if (!isSupportedLocale(key)) {
      problems.push({ path, message: `is not a supported locale (supported: ${SUPPORTED_LOCALES.join(', ')})` });
      continue;
    }
    const problem = valueProblem(value[key]);
    if (problem) problems.push({ path, message: problem });
  }
  return problems;
}

/**
 * Validates a `PATCH /projects/:id` body: `headline` values 3 to 140 characters, `page_content`
 * values 300 to 50,000, locales from {@link SUPPORTED_LOCALES}, at least one of the two fields, no
 * other fields.
 */
export function validateProjectEdit(body: unknown): Validated<ProjectEdit> {
  if (!isJsonObject(body)) return invalid('', `must be a JSON object (got ${jsonTypeName(body)})`);
  const problems = unknownKeyProblems(body, PROJECT_EDIT_FIELDS);
  if (body.headline === undefined && body.page_content === undefined) {
    problems.push({ path: '', message: 'give at least one of headline and page_content' });
  }
  if (body.headline !== undefined) problems.push(...localizedTextProblems('headline', body.headline, headlineProblem));
  if (body.page_content !== undefined) {
    problems.push(...localizedTextProblems('page_content', body.page_content, pageContentProblem));
  }
  if (problems.length > 0) return { ok: false, problems };
  const value: ProjectEdit = {};
  if (body.headline !== undefined) value.headline = body.headline as LocalizedText;
  if (body.page_content !== undefined) value.page_content = body.page_content as LocalizedText;
  return { ok: true, value };
}

/** A valid body of `POST /projects/:id/announcements`, with the category defaulted. */
export interface AnnouncementInput {
  title: string;
  content: string;
  /** Default `announcement` (the first of {@link ANNOUNCEMENT_CATEGORIES}). */
  category: AnnouncementCategory;
}

/** The fields `POST /projects/:id/announcements` accepts; any other key is a 422. */
const ANNOUNCEMENT_FIELDS = ['title', 'content', 'category'] as const;

/** The category used when a request gives none. */
const DEFAULT_ANNOUNCEMENT_CATEGORY: AnnouncementCategory = ANNOUNCEMENT_CATEGORIES[0];

/**
 * Validates an announcement body: `title` 3 to 100 characters, `content` 10 to 2,000, `category`
 * absent (then {@link DEFAULT_ANNOUNCEMENT_CATEGORY}) or one of {@link ANNOUNCEMENT_CATEGORIES}, no
 * other fields. `null` is not a category.
 */
export function validateAnnouncement(body: unknown): Validated<AnnouncementInput> {
  if (!isJsonObject(body)) return invalid('', `must be a JSON object (got ${jsonTypeName(body)})`);
  const problems = unknownKeyProblems(body, ANNOUNCEMENT_FIELDS);
  const title = stringLengthProblem(
    body.title,
    CONTRACT_LIMITS.announcementTitleMinLength,
    CONTRACT_LIMITS.announcementTitleMaxLength,
  );
  if (title) problems.push({ path: 'title', message: title });
  const content = stringLengthProblem(
    body.content,
    CONTRACT_LIMITS.announcementContentMinLength,
    CONTRACT_LIMITS.announcementContentMaxLength,
  );
  if (content) problems.push({ path: 'content', message: content });
  const category = body.category === undefined ? DEFAULT_ANNOUNCEMENT_CATEGORY : body.category;
  if (typeof category !== 'string' || !(ANNOUNCEMENT_CATEGORIES as readonly string[]).includes(category)) {
    problems.push({ path: 'category', message: `must be one of ${ANNOUNCEMENT_CATEGORIES.join(', ')}` });
  }
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    value: { title: body.title as string, content: body.content as string, category: category as AnnouncementCategory },
  };
}
