// The code of the attention chapter's views (../chapters.ts), fetched as one file when the
// first of them comes into sight (../load.ts).
import '../../components/tp-attention';
import '../../components/tp-saturation';
import '../../components/tp-sqrt-dk';
import '../../components/tp-masks';
