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

/**
 * A family of resources by URI template (RFC 6570, levels 1-3), e.g.
 * `test://template/{id}/data`. The gateway parses it at registration and
 * matches URIs by a linear scan (apps/gateway/src/catalogue/README.md).
 */
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
