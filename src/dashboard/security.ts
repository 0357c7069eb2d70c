import { listSecurityEvents, SECURITY_LOG_KEEP_DAYS } from '../accounts/security-log.js';
import { securityPage } from './pages/security-page.js';
import { showPage, type SignedInVisit } from './visit.js';

// The signed-in account's security log (src/accounts/security-log.ts): its own events only.

/** Pages past this are not offered: 90 days of events of one account fit far below it. */
const PAGE_MAX = 1000;

export async function getSecurityLog(visit: SignedInVisit) {
  const asked = Number(visit.url.searchParams.get('page') ?? '1');
  const page = Number.isSafeInteger(asked) && asked >= 1 && asked <= PAGE_MAX ? asked : 1;
  const { events, more } = await listSecurityEvents(visit.ctx, visit.session.accountId, page);
  return showPage(visit, 200, { title: 'Security log', current: 'account', body: securityPage({ events, page, more, keepDays: SECURITY_LOG_KEEP_DAYS }) });
}
