import type { FieldIssue } from '../errors.js';
import type { ListingAgentConfig } from './schema.js';

/**
 * The names exec hooks list (`votes.hooks[].env`, `votes.reminders.hooks[].env`) that the
 * configuration itself reads (its `${VAR}`s): the agent's credentials and settings, which a hook
 * never gets. One problem per name, at its path. The schema refuses the `LISTING_*` names already;
 * which other variables a configuration reads is known only where it is loaded.
 */
export function hookVariableProblems(config: ListingAgentConfig, variables: ReadonlySet<string>): FieldIssue[] {
  const problems: FieldIssue[] = [];
  const lists = [
    ['votes.hooks', config.votes.hooks],
    ['votes.reminders.hooks', config.votes.reminders.hooks],
  ] as const;
  for (const [list, hooks] of lists) {
    hooks.forEach((hook, index) => {
      if (hook.type !== 'exec') return;
      (hook.env ?? []).forEach((name, position) => {
        if (!variables.has(name)) return;
        problems.push({
          path: `${list}[${index}].env[${position}]`,
          message:
            `${name} is a variable this configuration reads (\${${name}}): an exec hook never gets what the agent reads, ` +
            'its credentials among them; give the hook what it needs under a name of its own',
        });
      });
    });
  }
  return problems;
}
