import { Type } from 'class-transformer';
import { IsArray, IsBoolean, IsOptional, IsString, MaxLength, ValidateNested } from 'class-validator';

/** A resource an agent serves (MCP Resource). Read through the bus on resources/read. */
export class ResourceDefinition {
  @IsString()
  @MaxLength(2048)
  uri: string;

  @IsString()
  @MaxLength(200)
  name: string;

  @IsOptional()
  @IsString()
  title?: string;

  @IsOptional()
  @IsString()
  description?: string;

  @IsOptional()
  @IsString()
  mimeType?: string;
}

/** A family of resources by URI template (RFC 6570 level 1: `{var}`), e.g. `test://template/{id}/data`. */
export class ResourceTemplateDefinition {
  @IsString()
  @MaxLength(2048)
  uriTemplate: string;

  @IsString()
  @MaxLength(200)
  name: string;

  @IsOptional()
  @IsString()
  description?: string;

  @IsOptional()
  @IsString()
  mimeType?: string;
}

export class PromptArgumentDefinition {
  @IsString()
  @MaxLength(200)
  name: string;

  @IsOptional()
  @IsString()
  description?: string;

  @IsOptional()
  @IsBoolean()
  required?: boolean;
}

/** A prompt an agent offers (MCP Prompt). Rendered by the agent on prompts/get. */
export class PromptDefinition {
  @IsString()
  @MaxLength(200)
  name: string;

  @IsOptional()
  @IsString()
  title?: string;

  @IsOptional()
  @IsString()
  description?: string;

  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => PromptArgumentDefinition)
  arguments?: PromptArgumentDefinition[];
}

/** Does `uri` belong to this template? `{name}` matches one or more characters other than `/`. */
export function matchesTemplate(uriTemplate: string, uri: string): boolean {
  const pattern = uriTemplate
    .split(/(\{[^}]+\})/)
    .map((part) => (/^\{[^}]+\}$/.test(part) ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${pattern}$`).test(uri);
}
