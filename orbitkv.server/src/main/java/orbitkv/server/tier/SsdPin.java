package orbitkv.server.tier;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import orbitkv.transfer.PayloadSource.PayloadLocation;

/** A pin of an SSD residence ({@link SsdTier}): its bytes are the whole file, checked for size as they are read. */
final class SsdPin extends TierPin<Path> {
    SsdPin(ResidenceTable<Path> table, ResidenceTable.Entry<Path> entry) {
        super(table, entry, true);
    }

    @Override
    public PayloadLocation location() {
        return new PayloadLocation.InFile(entry.storage, 0, entry.sizeBytes);
    }

    @Override
    Broken copyBytes(ByteBuffer view) {
        try (FileChannel ch = FileChannel.open(entry.storage, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size != entry.sizeBytes) {
                return new Broken(size < entry.sizeBytes ? CorruptionReason.TRUNCATED_FILE : CorruptionReason.SIZE_MISMATCH,
                        "file " + entry.storage.getFileName() + " holds " + size + " bytes, the block " + entry.sizeBytes);
            }
            long pos = 0;
            while (view.hasRemaining()) {
                int n = ch.read(view, pos);
                if (n < 0) {
                    return new Broken(CorruptionReason.TRUNCATED_FILE, "file " + entry.storage.getFileName()
                            + " ended after " + pos + " of " + entry.sizeBytes + " bytes");
                }
                pos += n;
            }
            return null;
        } catch (NoSuchFileException e) {
            return new Broken(CorruptionReason.MISSING_FILE, "file " + entry.storage.getFileName() + " is gone");
        } catch (IOException e) {
            return new Broken(CorruptionReason.IO_ERROR, "reading " + entry.storage.getFileName() + ": " + e);
        }
    }
}
