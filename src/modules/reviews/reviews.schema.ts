import { builder } from '../../graphql/builder.js';

export const Review = builder.prismaObject('Review', {
  // Load only the columns a query asks for (not searchText, descriptions… on every list).
  select: { id: true },
  fields: (t) => ({
    id: t.exposeID('id'),
    rating: t.exposeInt('rating', { description: '1 to 5' }),
    title: t.exposeString('title'),
    comment: t.exposeString('comment'),
    images: t.exposeStringList('images'),
    isVerified: t.exposeBoolean('isVerified'),
    verifiedPurchase: t.exposeBoolean('verifiedPurchase'),
    supplierResponse: t.exposeString('supplierResponse', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    product: t.relation('product'),
  }),
});
