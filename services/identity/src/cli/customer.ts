/** `npm run customer -- create`: creates a customer and prints its id and secret once. */
import { runMain, SecretBox } from '@collab/shared';
import { loadIdentityCliConfig } from '../config.js';
import { createIdentityDataSource } from '../data-source.js';
import { createCustomer } from '../domain/customers/customers.js';
import { prepareStoredSecrets } from '../domain/secrets.js';

const USAGE = 'usage: npm run customer -- create';

runMain('customer', async () => {
  const [command] = process.argv.slice(2);
  if (command !== 'create') {
    console.error(USAGE);
    process.exit(2);
  }
  const config = loadIdentityCliConfig(['SECRETS_ENCRYPTION_KEY']);
  const db = createIdentityDataSource(config.DATABASE_URL, 1);
  await db.initialize();
  try {
    const ctx = { db, secretBox: new SecretBox(config.SECRETS_ENCRYPTION_KEY) };
    // The same key as identity's, or nothing is written: a secret sealed with another key would not open.
    await prepareStoredSecrets(ctx);
    const customer = await createCustomer(ctx);
    console.log(`CUSTOMER_ID=${customer.id}\nCUSTOMER_SECRET=${customer.secret}`);
  } finally {
    await db.destroy();
  }
});
