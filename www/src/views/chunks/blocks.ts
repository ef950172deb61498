// The code of the blocks chapter's views (../chapters.ts), fetched as one file when the
// first of them comes into sight (../load.ts).
import '../../components/tp-architecture';
import '../../components/tp-ffn';
import '../../components/tp-norms';
import '../../components/tp-hidden';
import '../../components/tp-no-leak';
import '../../components/tp-dropout';
import '../../components/tp-weights';
