/**
 * Holds node's event loop open until released. A daemon command (`run`, `webhooks serve`,
 * `emulator`, `demo`) must end only when it is told to stop, never because its last socket
 * closed: the library unrefs every timer it owns (so it never keeps a bot's process alive), so
 * an agent with no listening socket (health off, no receiver) would otherwise end right after its
 * start, with exit 0 and its state lock left behind. One ref'd timer that never fires (it only
 * exists) costs nothing while idle.
 *
 * Release it once the command's stop is complete (not when the signal arrives): a graceful stop
 * may wait on unref'd timers too.
 */
export function keepProcessAlive(): () => void {
  // The longest delay node accepts (about 24.8 days); the callback does nothing if it ever runs.
  const timer = setInterval(() => undefined, 2 ** 31 - 1);
  return () => clearInterval(timer);
}
