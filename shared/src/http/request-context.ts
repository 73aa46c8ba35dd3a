/** Who a request comes from, as the gateway verified it and names it in the internal headers. */
import type { Viewer } from '../contracts/client-session.js';

export interface RequestContext {
  requestId: string;
  /** The application a verified server or access token belongs to. */
  applicationId?: string;
  /** The customer a verified application-management token belongs to. */
  customerId?: string;
  /** The viewer of a verified client token. */
  viewer?: Viewer;
}
