// A webhook receiver that checks fleetcron's signature (quoted in the README; run by
// test/verify-example.test.ts).
import { createServer } from 'node:http';
import { verifyWebhookSignature, type WebhookBody } from '@fleetcron/notify';

export function alertReceiver(secret: string, onAlert: (body: WebhookBody) => void) {
  const seen = new Set<string>(); // delivery ids already handled: a retry is not a second alert
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8'); // the raw body, before JSON.parse
      const check = verifyWebhookSignature({
        body,
        header: req.headers['x-fleetcron-signature'],
        secret,
      });
      if (!check.valid) {
        res.writeHead(401).end(check.problem); // missing, malformed, expired (replay), mismatch
        return;
      }
      const delivery = String(req.headers['x-fleetcron-delivery']);
      if (!seen.has(delivery)) {
        seen.add(delivery);
        onAlert(JSON.parse(body) as WebhookBody);
      }
      res.writeHead(204).end();
    });
  });
}
