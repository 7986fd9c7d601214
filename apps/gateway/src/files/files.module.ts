import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { GrantsModule } from '../grants/grants.module';
import { AttachmentResolver } from './attachments';
import { FileContentRoutes } from './file-content.routes';
import { FilesController } from './files.controller';
import { FilesService } from './files.service';
import { FilesStore } from './files.store';
import { FILE_STORAGE, type FileStorage } from './storage/file-storage';
import { LocalFileStorage } from './storage/local-file-storage';
import { S3FileStorage } from './storage/s3-file-storage';

/** The storage backend FILES_STORAGE names. */
export function fileStorageFrom(env: GatewayEnv): FileStorage {
  if (env.FILES_STORAGE === 'local') return new LocalFileStorage(env.FILES_DIR);
  return new S3FileStorage({
    bucket: env.FILES_S3_BUCKET,
    endpoint: env.FILES_S3_ENDPOINT || undefined,
    region: env.FILES_S3_REGION,
    forcePathStyle: env.FILES_S3_FORCE_PATH_STYLE === 'true',
    accessKeyId: env.FILES_S3_ACCESS_KEY_ID || undefined,
    secretAccessKey: env.FILES_S3_SECRET_ACCESS_KEY || undefined,
  });
}

/** Files and attachments: presigned uploads, signed downloads, storage, purge (README.md). */
@Module({
  imports: [AuthModule, GrantsModule],
  controllers: [FilesController],
  providers: [
    { provide: FILE_STORAGE, inject: [GATEWAY_ENV], useFactory: fileStorageFrom },
    FilesStore,
    FilesService,
    AttachmentResolver,
    FileContentRoutes,
  ],
  exports: [AttachmentResolver],
})
export class FilesModule {}
