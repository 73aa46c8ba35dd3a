/**
 * Setup file of every test file: notes on each test how many answers it had checked against
 * their route's response schema, so that the summary reporter can say how many a run checked
 * (a check that silently checks nothing shows as 0).
 */
import { afterEach } from 'vitest';
import { responseChecker } from './response-schemas.js';

let counted = 0;
afterEach(({ task }) => {
  task.meta.checkedAnswers = responseChecker.count - counted;
  counted = responseChecker.count;
});
