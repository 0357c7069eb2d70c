import { builder } from '../../graphql/builder.js';
import { withInput, withInputQuery } from '../../graphql/field-rules.js';
import { implementNode } from '../../graphql/nodes.js';
import { listLimitArgs, pageArgs, PaginationMetaRef, metaFor } from '../../graphql/pagination-types.js';
import {
  categoryBySlug,
  categoryOrder,
  categoryPage,
  countCategories,
  listCategories,
  categoryListInput,
  categoriesByIds,
  categoryFilterInput,
  categoryWindow,
  subtreeProductCount,
  subtreeProducts,
  type CategoryListInput,
} from './categories.service.js';

const CategoryCounts = builder.objectRef<{ products: number }>('CategoryCounts').implement({
  fields: (t) => ({ products: t.exposeInt('products', { description: 'Active products in this category and its subcategories' }) }),
});

const SAMPLE_DEFAULT = 4;

export const Category = builder.prismaObject('Category', {
  // Load only the columns a query asks for (not searchText, descriptions… on every list).
  select: { id: true },
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    nameEn: t.exposeString('nameEn'),
    slug: t.exposeString('slug'),
    description: t.exposeString('description'),
    image: t.exposeString('image', { nullable: true }),
    parentId: t.exposeID('parentId', { nullable: true, description: 'null for a top-level (level 1) category' }),
    order: t.exposeInt('order', { description: 'Display order among siblings' }),
    isActive: t.exposeBoolean('isActive'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    parent: t.relation('parent', { nullable: true }),
    children: t.relation('children', {
      description: 'Active subcategories in display order',
      query: { where: { isActive: true }, orderBy: categoryOrder },
    }),
    products: t.prismaField({
      type: ['Product'],
      description: 'The most viewed active products of this category and its subcategories',
      args: listLimitArgs(SAMPLE_DEFAULT),
      resolve: (query, category, args, ctx) => subtreeProducts(ctx, category.id, args.limit ?? SAMPLE_DEFAULT, query),
    }),
    _count: t.field({
      type: CategoryCounts,
      resolve: async (category, _args, ctx) => ({ products: await subtreeProductCount(ctx, category.id) }),
    }),
  }),
});

implementNode(Category, { load: categoriesByIds });

const CategoryList = builder.objectRef<CategoryListInput>('CategoryList').implement({
  fields: (t) => ({
    items: t.prismaField({ type: ['Category'], resolve: (query, input, _args, ctx) => listCategories(ctx, input, query) }),
    meta: t.field({
      type: PaginationMetaRef,
      nullable: true,
      description: 'null when neither page nor limit was given (the whole list is returned)',
      resolve: (input, _args, ctx) => {
        const page = categoryPage(input);
        return page ? metaFor(page, countCategories(ctx, input)) : null;
      },
    }),
  }),
});

builder.queryFields((t) => ({
  categories: t.field({
    type: CategoryList,
    description: 'Active categories ordered by display order; paginated only when page or limit is given',
    args: {
      ...pageArgs,
      parentOnly: t.arg.boolean({ required: false, description: 'Only top-level categories' }),
    },
    ...withInput(categoryListInput, (input) => input),
  }),
  categoriesConnection: t.prismaConnection({
    type: 'Category',
    cursor: 'id',
    description: 'Active categories as a Relay connection, in display order (ties by id), with the same filter as `categories`',
    args: { parentOnly: t.arg.boolean({ required: false, description: 'Only top-level categories' }) },
    ...withInputQuery(categoryFilterInput, (query, filter, ctx) => categoryWindow(ctx, filter, query)),
    totalCount: (_root, args, ctx) => countCategories(ctx, args as CategoryListInput),
  }),
  category: t.prismaField({
    type: 'Category',
    nullable: true,
    description: 'An active category by slug; null when there is none',
    args: { slug: t.arg.string({ required: true }) },
    lookupBy: 'slug',
    resolve: (query, _root, args, ctx) => categoryBySlug(ctx, args.slug, query),
  }),
}));
