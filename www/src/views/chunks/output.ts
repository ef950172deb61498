// The code of the output chapter's views but the generation (which the first screen's
// chunk holds): fetched as one file when the first of them comes into sight (../load.ts).
import '../../components/tp-output';
import '../../components/tp-beams';
import '../../components/tp-parallel';
