import type { Server } from 'node:http';
import { afterEach } from 'vitest';

/**
 * Returns `track(server)`: every server tracked in a test is closed after it, its keep-alive
 * connections too (a client's pool would otherwise hold close open until it times out).
 */
export function closedAfterEach(): (server: Server) => Server {
  let servers: Server[] = [];
  afterEach(async () => {
    const closing = servers.map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );
    servers = [];
    await Promise.all(closing);
  });
  return (server) => {
    servers.push(server);
    return server;
  };
}
