import SchemaBuilder, { BasePlugin, type PothosOutputFieldConfig, type SchemaTypes } from '@pothos/core';
import type { GraphQLFieldResolver } from 'graphql';

// A model type that selects its columns (plugin-prisma's `select` mode) has every exposed column
// wrapped by plugin-prisma, which asks, for every column of every row, which plan loaded the row
// (a lookup by response path) before reading the property. Beneath a column nothing is planned,
// and an exposed field's own resolver is the property read: a column already on the row is that
// read's answer, so it is answered at once. A column missing from the row goes through
// plugin-prisma as before (which loads it). Field rules (scopes, members) wrap outside this and
// still run. On a REST list page (about 25 columns a row) this was the most frequent call.

/** The property an exposed column field reads, when it is one of a `select`-mode model type's columns of scalar or enum type. */
function exposedColumn<Types extends SchemaTypes>(fieldConfig: PothosOutputFieldConfig<Types>): string | undefined {
  const { pothosExposedField: name, pothosPrismaSelect: select } = (fieldConfig.extensions ?? {}) as { pothosExposedField?: unknown; pothosPrismaSelect?: unknown };
  if (fieldConfig.kind !== 'PrismaObject' || typeof name !== 'string' || !select) return undefined;
  const type = fieldConfig.type.kind === 'List' ? fieldConfig.type.type : fieldConfig.type;
  return type.kind === 'Scalar' || type.kind === 'Enum' ? name : undefined;
}

export class ExposedColumnsPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override wrapResolve(
    resolver: GraphQLFieldResolver<unknown, Types['Context'], object>,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> {
    const column = exposedColumn(fieldConfig);
    if (column === undefined) return resolver;
    return (parent, args, context, info) => {
      const value = (parent as Record<string, unknown>)[column];
      return value !== undefined ? value : resolver(parent, args, context, info);
    };
  }
}

/** The plugin's name, for the builder's `plugins` list: after fieldRules (which wraps outside it), before plugin-prisma. */
export const exposedColumnsPlugin = 'exposedColumns' as const;

declare global {
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      exposedColumns: ExposedColumnsPlugin<Types>;
    }
  }
}

SchemaBuilder.registerPlugin(exposedColumnsPlugin, ExposedColumnsPlugin);
