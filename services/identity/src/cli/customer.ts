/** `npm run customer -- create`: creates a customer and prints its id and secret once. */
import { commonVars, loadConfig, runMain } from '@collab/shared';
import { createIdentityDataSource } from '../data-source.js';
import { createCustomer } from '../domain/customers/customers.js';

const USAGE = 'usage: npm run customer -- create';

runMain('customer', async () => {
  const [command] = process.argv.slice(2);
  if (command !== 'create') {
    console.error(USAGE);
    process.exit(2);
  }
  const { DATABASE_URL } = loadConfig({ DATABASE_URL: commonVars.DATABASE_URL });
  const db = createIdentityDataSource(DATABASE_URL, 1);
  await db.initialize();
  const customer = await createCustomer(db);
  await db.destroy();
  console.log(`CUSTOMER_ID=${customer.id}\nCUSTOMER_SECRET=${customer.secret}`);
});
