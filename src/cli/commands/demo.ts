import { parseDuration } from '../../config/duration.js';
import { runDemo } from '../../demo/demo.js';
import { parseCommandArgs } from '../args.js';
import { EXIT, UsageError, type CliIo } from '../io.js';
import { keepProcessAlive } from '../keep-alive.js';
import { timerDelay } from '../../contract/timer-delay.js';

export const DEMO_HELP = `Usage: listing-agent demo [options]

Run the agent against the embedded emulator and a simulated bot whose server count drifts,
with its state in a temporary folder, and print what happens. Nothing reaches the real service.

Options:
  --duration D    stop after D (30s, 5m); default: run until Ctrl-C
  --keep-state    keep the temporary state folder afterwards (its path is printed)
  -h, --help      show this help
`;

/** `listing-agent demo`. */
export async function runDemoCommand(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs('demo', argv, {
    duration: { type: 'string' },
    'keep-state': { type: 'boolean' },
  });
  if (values.help) {
    io.stdout(DEMO_HELP);
    return EXIT.ok;
  }
  let until: Promise<unknown> = io.stopRequested;
  if (typeof values.duration === 'string') {
    const ms = parseDuration(values.duration);
    if (ms === undefined || ms <= 0)
      throw new UsageError(`--duration must be a duration such as 30s or 5m (got '${values.duration}')`, 'demo');
    until = Promise.race([io.stopRequested, new Promise((resolve) => setTimeout(resolve, timerDelay(ms)))]);
  }
  // Up until told to stop (or --duration), whatever socket or timer is left (see keepProcessAlive).
  const release = keepProcessAlive();
  try {
    await runDemo({
      print: (line) => io.stdout(`${line}\n`),
      until,
      keepState: values['keep-state'] === true,
    });
  } finally {
    release();
  }
  return EXIT.ok;
}
