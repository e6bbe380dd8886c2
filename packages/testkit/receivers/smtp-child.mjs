// A real SMTP server for tests, run by startSmtpReceiver() in a child process of its own.
// stdout: one JSON line per event ({"ready":port}, {"mail":{...}}); stdin: one JSON command per
// line ({"failNext":n,"code":451} or {"hangNext":n}). It exits when stdin closes (the parent died
// or closed it), besides the parent's pdeathsig.
import { createInterface } from 'node:readline';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

const planned = [];
const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  logger: false,
  onData(stream, session, callback) {
    const chunks = [];
    stream.on('data', (chunk) => chunks.push(chunk));
    stream.on('end', async () => {
      const raw = Buffer.concat(chunks);
      const plan = planned.shift();
      if (plan === 'hang') return; // never answer: the client's socket timeout ends it
      if (plan !== undefined) {
        const error = new Error(`planned failure ${plan}`);
        error.responseCode = plan;
        send({ refused: { code: plan } });
        callback(error);
        return;
      }
      try {
        const mail = await simpleParser(raw);
        send({
          mail: {
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            subject: mail.subject ?? '',
            text: mail.text ?? '',
            html: typeof mail.html === 'string' ? mail.html : '',
            headers: Object.fromEntries(
              [...mail.headers].map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
            ),
            receivedAt: Date.now(),
          },
        });
        callback();
      } catch (error) {
        callback(error);
      }
    });
  },
});
server.on('error', (error) => send({ error: String(error) }));
server.listen(0, '127.0.0.1', () => send({ ready: server.server.address().port }));

createInterface({ input: process.stdin })
  .on('line', (line) => {
    const command = JSON.parse(line);
    if (command.failNext) for (let i = 0; i < command.failNext; i++) planned.push(command.code);
    if (command.hangNext) for (let i = 0; i < command.hangNext; i++) planned.push('hang');
    send({ ack: command.id });
  })
  .on('close', () => process.exit(0));
