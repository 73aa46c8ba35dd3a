/**
 * A real SMTP server on 127.0.0.1 for the mail tests: every mail it accepts is parsed with a MIME
 * parser and kept. `refuseNext(n)` makes it answer the next n mails with a temporary failure
 * (451), as a server under load does.
 */
import type { AddressInfo } from 'node:net';
import { until } from '@collab/shared/devkit';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  /** The envelope's recipients (RCPT TO). */
  rcptTo: string[];
  parsed: ParsedMail;
}

export interface TestSmtpServer {
  url: string;
  received: ReceivedMail[];
  /** Mails refused so far (the server answered 451). */
  refused: number;
  refuseNext(count: number): void;
  /** The mails sent to `address`, once `count` of them arrived. */
  waitFor(address: string, count?: number): Promise<ReceivedMail[]>;
  to(address: string): ReceivedMail[];
  close(): Promise<void>;
}

export async function startSmtpServer(): Promise<TestSmtpServer> {
  let toRefuse = 0;
  const state = { received: [] as ReceivedMail[], refused: 0 };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (toRefuse > 0) {
          toRefuse--;
          state.refused++;
          const error = Object.assign(new Error('Try again later'), { responseCode: 451 });
          return callback(error);
        }
        simpleParser(Buffer.concat(chunks)).then(
          (parsed) => {
            state.received.push({ rcptTo: session.envelope.rcptTo.map((rcpt) => rcpt.address), parsed });
            callback();
          },
          (error: Error) => callback(error),
        );
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  const to = (address: string) => state.received.filter((mail) => mail.rcptTo.includes(address));
  return {
    url: `smtp://127.0.0.1:${port}`,
    get received() {
      return state.received;
    },
    get refused() {
      return state.refused;
    },
    refuseNext(count) {
      toRefuse = count;
    },
    to,
    async waitFor(address, count = 1) {
      await until(async () => to(address).length >= count, `${count} mail(s) to ${address}`, 20_000);
      return to(address);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
