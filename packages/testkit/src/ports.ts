import { createServer } from 'node:net';

/**
 * Finds a free TCP port on 127.0.0.1 by binding port 0 and closing the socket again. Another
 * process may take the port before the server binds it; server starters retry on a bind failure.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('could not pick a free port'))));
    });
  });
}
