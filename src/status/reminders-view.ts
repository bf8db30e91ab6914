import type { StatusReminder, StatusReminders } from './document.js';
import { plural, timeView, type TimeView } from './format.js';

/** One reminder in the status page's tables. */
export interface ReminderRow {
  /** The service user ID (the reminder is for them). */
  userId: string;
  /** Their Discord ID, when known. */
  platformId: string | null;
  projectId: string;
  voteKey: string;
  due: TimeView;
  expires: TimeView;
}

/** The reminders part of the votes section: nothing shown when off. */
export interface RemindersView {
  enabled: boolean;
  summary: string;
  next: ReminderRow[];
  lastSent: ReminderRow[];
}

const row = (r: StatusReminder, now: number): ReminderRow => ({
  userId: r.userId,
  platformId: r.platformId,
  projectId: r.projectId,
  voteKey: r.voteKey,
  due: timeView(r.dueAt, now),
  expires: timeView(r.expiresAt, now),
});

/** What the page says of the vote reminders (`votes.reminders`); a document of an older agent may have none. */
export function remindersView(reminders: StatusReminders | undefined, now: number): RemindersView {
  if (reminders === undefined || !reminders.enabled) return { enabled: false, summary: '', next: [], lastSent: [] };
  const { scheduled, next, lastSent } = reminders;
  const count =
    scheduled === null ? 'Vote reminders: the schedule cannot be read right now' : `${plural(scheduled, 'vote reminder')} scheduled`;
  const listed = scheduled !== null && next.length > 0 && next.length < scheduled ? `; the next ${next.length} are listed` : '';
  const sent = lastSent.length === 0 ? '; none sent yet by this agent' : '';
  const rows = (list: typeof next) => list.map((r) => row(r, now));
  return { enabled: true, summary: `${count}${listed}${sent}.`, next: rows(next), lastSent: rows(lastSent) };
}
