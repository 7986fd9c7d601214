import type { ResourceDefinition, ResourceTemplateDefinition } from '@mcpgw/contracts';

export interface ResourceContents {
  uri: string;
  mimeType?: string;
  text?: string;
  blob?: string;
}

/** The resources an agent serves: what it registers, and how it reads one. */
export interface ResourceProvider {
  resources: ResourceDefinition[];
  templates: ResourceTemplateDefinition[];
  /** Undefined when the URI is not one of these resources. */
  read(uri: string): Promise<ResourceContents[] | undefined>;
}

export const RESOURCES = Symbol('RESOURCES');
