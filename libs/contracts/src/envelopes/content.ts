import { Allow, IsIn, IsObject, IsOptional, IsString } from 'class-validator';

/**
 * MCP content items as the agent produces them. The gateway passes them through
 * intact; only the discriminator and the fields every type needs are checked here.
 */
export type ContentItem =
  | { type: 'text'; text: string; _meta?: Record<string, unknown> }
  | { type: 'image'; data: string; mimeType: string; _meta?: Record<string, unknown> }
  | { type: 'audio'; data: string; mimeType: string; _meta?: Record<string, unknown> }
  | { type: 'resource_link'; uri: string; name: string; mimeType?: string; description?: string }
  | { type: 'resource'; resource: { uri: string; mimeType?: string; text?: string; blob?: string } };

export const CONTENT_TYPES = ['text', 'image', 'audio', 'resource_link', 'resource'] as const;

export class ContentItemDto {
  @IsIn(CONTENT_TYPES)
  type: ContentItem['type'];

  @IsOptional()
  @IsString()
  text?: string;

  @IsOptional()
  @IsString()
  data?: string;

  @IsOptional()
  @IsString()
  mimeType?: string;

  @IsOptional()
  @IsString()
  uri?: string;

  @IsOptional()
  @IsString()
  name?: string;

  @IsOptional()
  @IsObject()
  resource?: Record<string, unknown>;

  @Allow()
  description?: string;

  @Allow()
  _meta?: Record<string, unknown>;
}

/** The fields a content item of each type must carry. */
export function missingContentFields(item: ContentItemDto): string[] {
  const required: Record<ContentItem['type'], (keyof ContentItemDto)[]> = {
    text: ['text'],
    image: ['data', 'mimeType'],
    audio: ['data', 'mimeType'],
    resource_link: ['uri', 'name'],
    resource: ['resource'],
  };
  return required[item.type].filter((field) => item[field] === undefined);
}
