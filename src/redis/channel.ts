import type { RedisConnection } from './connection.js';

/**
 * Listens to a pub/sub channel on `connection` itself (RESP3 lets a subscribed connection go on
 * running commands), while there are listeners: returns an `onChange`-style function that adds a
 * listener and returns its unsubscribe. Listeners are also called each time the connection comes
 * back up, since messages published while it was down are lost. A subscription that fails (Redis
 * down) is made again when the connection comes up; one that succeeded is renewed by the client
 * itself after a reconnect. A listener that throws does not keep the others from hearing.
 */
export function watchChannel(connection: RedisConnection, channel: string): (listener: () => void) => () => void {
  const listeners = new Set<() => void>();
  let subscribed = false;
  const fire = () => {
    for (const listener of [...listeners]) {
      try {
        listener();
      } catch {
        // The listener's own business: the others still hear.
      }
    }
  };
  const subscribe = () => {
    if (subscribed || listeners.size === 0 || !connection.isUp) return;
    subscribed = true;
    connection.client.subscribe(channel, fire).catch(() => {
      // Down in the meantime: `up` subscribes again.
      subscribed = false;
    });
  };
  const onUp = () => {
    subscribe();
    if (listeners.size > 0) fire();
  };
  return (listener) => {
    listeners.add(listener);
    if (listeners.size === 1) connection.on('up', onUp);
    subscribe();
    return () => {
      if (!listeners.delete(listener) || listeners.size > 0) return;
      connection.off('up', onUp);
      if (subscribed) {
        subscribed = false;
        connection.client.unsubscribe(channel, fire).catch(() => undefined);
      }
    };
  };
}
