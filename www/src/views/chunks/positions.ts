// The code of the positions chapter's views (../chapters.ts), fetched as one file when the
// first of them comes into sight (../load.ts).
import '../../components/tp-positions';
import '../../components/tp-embedding-scale';
import '../../components/tp-order';
import '../../components/tp-extrapolation';
