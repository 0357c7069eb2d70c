import { orderListView, orderView, type OrderSide } from '../domain/orders/orders.views.js';
import { AppError } from '../shared/errors.js';
import { orderPage, ordersPage } from './pages/orders-page.js';
import { pageNumberOf, showPage, type SignedInVisit } from './visit.js';

// Orders, read-only: orders move through the API (a buyer's cancel, a supplier member's status
// change). A buyer sees their own orders; a member of a supplier also sees the supplier's.

const NO_ORDER: Record<OrderSide, string> = { buyer: 'There is no such order among yours.', supplier: "There is no such order among your supplier's." };
const NAV_ENTRY = { buyer: 'orders', supplier: 'supplier-orders' } as const;

async function showOrders(visit: SignedInVisit, side: OrderSide) {
  const list = await orderListView(visit.ctx, side, pageNumberOf(visit));
  const title = side === 'buyer' ? 'Orders' : `Orders of ${list.supplier}`;
  return showPage(visit, 200, { title, current: NAV_ENTRY[side], body: ordersPage(side, list) });
}

async function showOrder(visit: SignedInVisit, side: OrderSide, orderNumber: string) {
  const order = await orderView(visit.ctx, side, orderNumber);
  if (!order) throw new AppError('NOT_FOUND', NO_ORDER[side]);
  return showPage(visit, 200, { title: `Order ${order.orderNumber}`, current: NAV_ENTRY[side], body: orderPage(side, order, visit.session.accountId) });
}

export const getOrders = (visit: SignedInVisit) => showOrders(visit, 'buyer');
export const getOrder = (visit: SignedInVisit, [orderNumber]: string[]) => showOrder(visit, 'buyer', orderNumber!);
export const getSupplierOrders = (visit: SignedInVisit) => showOrders(visit, 'supplier');
export const getSupplierOrder = (visit: SignedInVisit, [orderNumber]: string[]) => showOrder(visit, 'supplier', orderNumber!);
